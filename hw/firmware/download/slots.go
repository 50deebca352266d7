package download

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// localHost is the host key of file sources.
const localHost = "local files"

// slots hands out transfer slots: at most total at once, at most perHost
// to one host. The objects whose artifacts wait take free slots in turn
// (round-robin: the object served longest ago goes first), so an object
// gets its next slot only once every other waiting object that can use
// one had its turn; within an object the hosts take turns the same way,
// and one host's waiters go in arrival order. An object is a cache
// directory (one firmware object, or one ephemeral staging of it). A host
// whose transfers crawl holds at most perHost slots, and neither it nor an
// object with many artifacts keeps another object waiting behind its
// queue.
type slots struct {
	total, perHost int

	mu      sync.Mutex
	running int
	hosts   map[string]*hostState   // hosts with transfers running or waiting
	objects map[string]*objectQueue // objects with transfers running or waiting
	seq     uint64                  // counts arrivals and grants, for ordering
}

// hostState counts one host's running and waiting transfers.
type hostState struct {
	running, waiting int
	// served is s.seq at this host's last grant (0: none while it was
	// known), so the host served longest ago goes first within an object.
	served uint64
}

// objectQueue is one object's waiters in arrival order, and its turn.
type objectQueue struct {
	running int
	waiters []*slotWaiter
	// served is s.seq at this object's last grant (0: none while it was
	// known), so the object served longest ago takes the next free slot.
	served uint64
}

// slotWaiter is one artifact waiting for a slot; ready is closed when it
// is granted one.
type slotWaiter struct {
	object, host string
	ready        chan struct{}
	granted      bool
	arrived      uint64
}

func newSlots(total, perHost int) *slots {
	return &slots{
		total: total, perHost: min(perHost, total),
		hosts: map[string]*hostState{}, objects: map[string]*objectQueue{},
	}
}

// hostOf is the host a source's slot is counted against: the URL's
// host[:port] in lower case, or localHost for file sources.
func hostOf(src manifest.Source) string {
	if src.Kind == manifest.SourceFile {
		return localHost
	}
	u, err := url.Parse(src.URL)
	if err != nil || u.Host == "" {
		return "unknown host"
	}
	return strings.ToLower(u.Host)
}

// objectOf is the object whose turn an artifact fetched into dir takes:
// the cache directory, cleaned.
func objectOf(dir string) string { return filepath.Clean(dir) }

// acquire waits for a slot on host for object; the returned func gives it
// back. A cancelled ctx leaves the queue (or gives back a slot granted
// meanwhile).
func (s *slots) acquire(ctx context.Context, object, host string, log zerolog.Logger) (func(), error) {
	w := s.enqueue(object, host)
	release := func() { s.release(object, host) }
	select {
	case <-w.ready:
		return release, nil
	default:
	}
	log.Debug().Str("host", host).Int("concurrency", s.total).Int("per_host", s.perHost).
		Msg("artifact waiting for a download slot")
	select {
	case <-w.ready:
		return release, nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if w.granted { // granted while the context ended: give it back
		s.mu.Unlock()
		release()
	} else {
		s.dropLocked(w)
		s.mu.Unlock()
	}
	return nil, interrupted(context.Cause(ctx))
}

// enqueue queues a waiter at the end of object's queue and grants what
// slots are free; the waiter's ready is closed once it holds a slot.
func (s *slots) enqueue(object, host string) *slotWaiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	w := &slotWaiter{object: object, host: host, ready: make(chan struct{}), arrived: s.seq}
	o := s.objects[object]
	if o == nil {
		o = &objectQueue{}
		s.objects[object] = o
	}
	o.waiters = append(o.waiters, w)
	h := s.hosts[host]
	if h == nil {
		h = &hostState{}
		s.hosts[host] = h
	}
	h.waiting++
	s.dispatchLocked()
	return w
}

// release gives back a slot of object on host and grants what it frees.
func (s *slots) release(object, host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hosts[host].running--
	s.objects[object].running--
	s.running--
	s.forgetLocked(object, host)
	s.dispatchLocked()
}

// dispatchLocked grants free slots, each to the object served longest ago
// among those with a waiter on a host below its per-host limit (an object
// never served goes first; between those, the one whose candidate came
// first). The object's candidate is its waiter on such a host served
// longest ago, the earliest of that host's.
func (s *slots) dispatchLocked() {
	for s.running < s.total {
		var next *objectQueue
		var pick int
		for _, o := range s.objects {
			i := s.candidateLocked(o)
			if i < 0 {
				continue
			}
			if next == nil || o.served < next.served ||
				(o.served == next.served && o.waiters[i].arrived < next.waiters[pick].arrived) {
				next, pick = o, i
			}
		}
		if next == nil {
			return
		}
		w := next.waiters[pick]
		next.waiters = append(next.waiters[:pick:pick], next.waiters[pick+1:]...)
		h := s.hosts[w.host]
		h.waiting--
		h.running++
		next.running++
		s.running++
		s.seq++
		h.served, next.served = s.seq, s.seq
		w.granted = true
		close(w.ready)
	}
}

// candidateLocked returns the index of o's waiter that would take a slot
// now, -1 when every one waits for a host at its per-host limit.
func (s *slots) candidateLocked(o *objectQueue) int {
	pick := -1
	var pickServed uint64
	for i, w := range o.waiters {
		h := s.hosts[w.host]
		if h.running >= s.perHost {
			continue
		}
		// Waiters are in arrival order: only a host served earlier wins.
		if pick < 0 || h.served < pickServed {
			pick, pickServed = i, h.served
		}
	}
	return pick
}

// dropLocked removes a waiter that gave up.
func (s *slots) dropLocked(w *slotWaiter) {
	o := s.objects[w.object]
	for i, x := range o.waiters {
		if x == w {
			o.waiters = append(o.waiters[:i:i], o.waiters[i+1:]...)
			break
		}
	}
	s.hosts[w.host].waiting--
	s.forgetLocked(w.object, w.host)
}

// forgetLocked drops an idle object and an idle host, so the maps hold
// only those in use.
func (s *slots) forgetLocked(object, host string) {
	if o := s.objects[object]; o.running == 0 && len(o.waiters) == 0 {
		delete(s.objects, object)
	}
	if h := s.hosts[host]; h.running == 0 && h.waiting == 0 {
		delete(s.hosts, host)
	}
}
