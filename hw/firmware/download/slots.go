package download

import (
	"context"
	"net/url"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// localHost is the host key of file sources.
const localHost = "local files"

// slots hands out transfer slots: at most total at once, at most perHost
// to one host. Waiters queue per host in arrival order, and the hosts take
// free slots in turn (round-robin: the host served longest ago goes first),
// so a host whose transfers crawl holds at most perHost slots and cannot
// keep another host's artifacts waiting behind its own queue.
type slots struct {
	total, perHost int

	mu      sync.Mutex
	running int
	hosts   map[string]*hostQueue // hosts with transfers running or waiting
	seq     uint64                // counts arrivals and grants, for ordering
}

// hostQueue is one host's running transfers and waiters.
type hostQueue struct {
	running int
	waiters []*slotWaiter
	// served is s.seq at this host's last grant (0: none while it was
	// known), so the host served longest ago takes the next free slot.
	served uint64
}

// slotWaiter is one artifact waiting for a slot; ready is closed when it
// is granted one.
type slotWaiter struct {
	ready   chan struct{}
	granted bool
	arrived uint64
}

func newSlots(total, perHost int) *slots {
	return &slots{total: total, perHost: min(perHost, total), hosts: map[string]*hostQueue{}}
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

// acquire waits for a slot on host; the returned func gives it back. A
// cancelled ctx leaves the queue (or gives back a slot granted meanwhile).
func (s *slots) acquire(ctx context.Context, host string, log zerolog.Logger) (func(), error) {
	w := s.enqueue(host)
	release := func() { s.release(host) }
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
		s.dropLocked(host, w)
		s.mu.Unlock()
	}
	return nil, interrupted(context.Cause(ctx))
}

// enqueue queues a waiter at the end of host's queue and grants what
// slots are free; the waiter's ready is closed once it holds a slot.
func (s *slots) enqueue(host string) *slotWaiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	w := &slotWaiter{ready: make(chan struct{}), arrived: s.seq}
	q := s.queue(host)
	q.waiters = append(q.waiters, w)
	s.dispatchLocked()
	return w
}

// release gives back a slot of host and grants what it frees.
func (s *slots) release(host string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.hosts[host]
	q.running--
	s.running--
	s.forgetLocked(host, q)
	s.dispatchLocked()
}

// queue returns host's queue, creating it.
func (s *slots) queue(host string) *hostQueue {
	q := s.hosts[host]
	if q == nil {
		q = &hostQueue{}
		s.hosts[host] = q
	}
	return q
}

// dispatchLocked grants free slots to the heads of the host queues: each
// to the host below its per-host limit that was served longest ago (a
// host never served goes first; between those, the one whose head waiter
// came first).
func (s *slots) dispatchLocked() {
	for s.running < s.total {
		var next *hostQueue
		for _, q := range s.hosts {
			if len(q.waiters) == 0 || q.running >= s.perHost {
				continue
			}
			if next == nil || q.served < next.served ||
				(q.served == next.served && q.waiters[0].arrived < next.waiters[0].arrived) {
				next = q
			}
		}
		if next == nil {
			return
		}
		w := next.waiters[0]
		next.waiters = next.waiters[1:]
		next.running++
		s.running++
		s.seq++
		next.served = s.seq
		w.granted = true
		close(w.ready)
	}
}

// dropLocked removes a waiter that gave up.
func (s *slots) dropLocked(host string, w *slotWaiter) {
	q := s.hosts[host]
	for i, x := range q.waiters {
		if x == w {
			q.waiters = append(q.waiters[:i:i], q.waiters[i+1:]...)
			break
		}
	}
	s.forgetLocked(host, q)
}

// forgetLocked drops an idle host, so the map holds only hosts in use.
func (s *slots) forgetLocked(host string, q *hostQueue) {
	if q.running == 0 && len(q.waiters) == 0 {
		delete(s.hosts, host)
	}
}
