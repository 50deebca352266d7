package actors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rmsd/rmsd/messages"
)

// Capacity. Only jobs in flight (not terminal) count against the limit
// that refuses work. Terminal records are kept for their TTL while there is
// room; when an admission needs room, the oldest terminal records are
// evicted first (capacityEvictions), so finished jobs never block new ones.
//
// The store keeps the terminal records in a queue by the order they became
// terminal, and the jobs in flight counted by kind, so an admission at
// capacity costs O(evicted) amortised instead of a scan of the index.

// terminalQueue lists job ids in the order they became terminal. Entries
// are removed lazily: an id whose record is gone is dropped when it reaches
// the head, and the queue is compacted when most of it is such garbage.
type terminalQueue struct {
	ids  []string
	head int
	// unsorted is set when records were restored from a snapshot (which
	// lists them by id): the next use sorts the queue by update time.
	unsorted bool
}

func (q *terminalQueue) push(id string) { q.ids = append(q.ids, id) }

func (q *terminalQueue) len() int { return len(q.ids) - q.head }

// enterFlight counts a record that was created or restored. A terminal one
// joins the terminal queue; another is counted in flight under its kind:
// its own type, or its parent's for an untyped child.
func (s *jobStore) enterFlight(r *record) {
	r.kind = r.snap.Type
	if r.kind == messages.TypeNone && r.snap.ParentID != "" {
		if p, ok := s.jobs[r.snap.ParentID]; ok {
			r.kind = p.snap.Type
		}
	}
	if r.snap.State.IsTerminal() {
		s.terminal.push(r.snap.ID)
		return
	}
	s.inFlight[r.kind]++
	if r.reservation {
		s.reservationsInFlight++
	}
}

// leaveFlight is called before a record in flight becomes terminal (ended)
// or leaves the index (ended false).
func (s *jobStore) leaveFlight(r *record, ended bool) {
	if r.snap.State.IsTerminal() {
		if !ended {
			s.forgetTerminal()
		}
		return
	}
	if s.inFlight[r.kind]--; s.inFlight[r.kind] <= 0 {
		delete(s.inFlight, r.kind)
	}
	if r.reservation {
		s.reservationsInFlight--
	}
	if ended {
		s.terminal.push(r.snap.ID)
	}
}

// forgetTerminal notes that a terminal record left the index: when the
// queue holds more than twice as many entries as there are records, the
// entries of gone records are dropped (amortised O(1) per eviction).
func (s *jobStore) forgetTerminal() {
	q := &s.terminal
	if q.len() <= 2*len(s.jobs)+64 {
		return
	}
	kept := q.ids[:0]
	for _, id := range q.ids[q.head:] {
		if _, ok := s.jobs[id]; ok {
			kept = append(kept, id)
		}
	}
	clear(q.ids[len(kept):])
	q.ids, q.head = kept, 0
}

// inFlightCount returns how many jobs are not terminal.
func (s *jobStore) inFlightCount() int {
	n := 0
	for _, c := range s.inFlight {
		n += c
	}
	return n
}

// capacityEvictions lists the evictions that make room for need more
// records under limit: the oldest terminal records first, a batch parent
// together with its children (children first), a child only with its
// parent. A record still holding nodes (its workflow has not returned) is
// never evicted, nor a parent with a child in flight. It returns the events
// and how many records stay in the index after them. The store's queue is
// advanced past what it evicts and what it drops; the index itself is
// changed only when the events are applied.
func (s *jobStore) capacityEvictions(need, limit int) ([]messages.Event, int) {
	q := &s.terminal
	if q.unsorted {
		s.sortTerminal()
	}
	remain := len(s.jobs)
	var evs []messages.Event
	var stuck []string
	for remain+need > limit && q.head < len(q.ids) {
		id := q.ids[q.head]
		q.ids[q.head] = ""
		q.head++
		r, ok := s.jobs[id]
		if !ok {
			continue // evicted already (the reaper)
		}
		if _, ok := s.jobs[r.snap.ParentID]; ok && r.snap.ParentID != "" {
			continue // leaves with its parent
		}
		unit := s.evictionUnit(r)
		if unit == nil {
			stuck = append(stuck, id)
			continue
		}
		evs = append(evs, unit...)
		remain -= len(unit)
	}
	// What cannot go yet stays at the head, in its order.
	q.head -= len(stuck)
	copy(q.ids[q.head:], stuck)
	if q.head > len(q.ids)/2 {
		q.ids = append(q.ids[:0], q.ids[q.head:]...)
		q.head = 0
	}
	return evs, remain
}

// evictionUnit returns the evictions of a terminal top-level record and
// its children (children first), or nil when any of them still holds a
// node or a child is in flight.
func (s *jobStore) evictionUnit(r *record) []messages.Event {
	if len(r.holds) > 0 || r.ret.awaiting {
		return nil
	}
	evs := make([]messages.Event, 0, len(r.snap.ChildIDs)+1)
	for _, id := range r.snap.ChildIDs {
		c, ok := s.jobs[id]
		if !ok {
			continue
		}
		if !c.snap.State.IsTerminal() || len(c.holds) > 0 || c.ret.awaiting {
			return nil
		}
		evs = append(evs, messages.JobEvicted{ID: id})
	}
	return append(evs, messages.JobEvicted{ID: r.snap.ID})
}

// sortTerminal orders the queue by the time each record was last updated
// (then by id), after records were restored from a snapshot.
func (s *jobStore) sortTerminal() {
	q := &s.terminal
	live := make([]string, 0, q.len())
	for _, id := range q.ids[q.head:] {
		if _, ok := s.jobs[id]; ok {
			live = append(live, id)
		}
	}
	slices.SortStableFunc(live, func(a, b string) int {
		if c := s.jobs[a].snap.UpdatedAt.Compare(s.jobs[b].snap.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	q.ids, q.head, q.unsorted = live, 0, false
}

// capacityRefusal says the tracker is full of jobs that cannot be evicted:
// n records (limit), of which the jobs in flight are named by kind.
func (s *jobStore) capacityRefusal(n, limit int) *messages.RefusedError {
	kinds := make([]messages.JobType, 0, len(s.inFlight))
	for k := range s.inFlight {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	parts := make([]string, 0, len(kinds)+1)
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s: %d", k, s.inFlight[k]))
	}
	if kept := n - s.inFlightCount(); kept > 0 {
		parts = append(parts, fmt.Sprintf("ended but still holding nodes or in an open batch: %d", kept))
	}
	return refuse(messages.ErrAtCapacity, messages.ErrorInternal,
		fmt.Sprintf("job tracker at capacity: %d jobs in flight (limit %d; %s); retry after in-flight jobs finish",
			n, limit, strings.Join(parts, ", ")))
}
