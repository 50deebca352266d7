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
// to one host. Waiters queue per host in arrival order, and the hosts with
// waiters are served round-robin, so a host whose transfers crawl holds at
// most perHost slots and cannot keep another host's artifacts waiting
// behind its own queue.
type slots struct {
	total, perHost int

	mu      sync.Mutex
	running int
	hosts   map[string]*hostQueue
	// ring lists the hosts that have waiters, in the order they first
	// queued; next is where the round-robin resumes.
	ring []string
	next int
}

// hostQueue is one host's running transfers and waiters.
type hostQueue struct {
	running int
	waiters []*slotWaiter
}

// slotWaiter is one artifact waiting for a slot; ready is closed when it
// is granted one.
type slotWaiter struct {
	ready   chan struct{}
	granted bool
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
	w := &slotWaiter{ready: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queue(host)
	if len(q.waiters) == 0 {
		s.ring = append(s.ring, host)
	}
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

// dispatchLocked grants free slots to the heads of the host queues,
// visiting the hosts round-robin from where it last stopped and skipping
// those at their per-host limit.
func (s *slots) dispatchLocked() {
	for s.running < s.total {
		i, ok := s.nextHostLocked()
		if !ok {
			return
		}
		host := s.ring[i]
		q := s.hosts[host]
		w := q.waiters[0]
		q.waiters = q.waiters[1:]
		q.running++
		s.running++
		w.granted = true
		close(w.ready)
		s.next = i + 1
		if len(q.waiters) == 0 {
			s.removeFromRingLocked(i)
		}
	}
}

// nextHostLocked finds, from next on and wrapping, the first host in the
// ring below its per-host limit.
func (s *slots) nextHostLocked() (int, bool) {
	n := len(s.ring)
	for k := range n {
		i := (s.next + k) % n
		if s.hosts[s.ring[i]].running < s.perHost {
			return i, true
		}
	}
	return 0, false
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
	if len(q.waiters) == 0 {
		for i, h := range s.ring {
			if h == host {
				s.removeFromRingLocked(i)
				break
			}
		}
	}
	s.forgetLocked(host, q)
}

// removeFromRingLocked takes the host at i out of the ring, keeping the
// round-robin position on the host that followed it.
func (s *slots) removeFromRingLocked(i int) {
	s.ring = append(s.ring[:i:i], s.ring[i+1:]...)
	if s.next > i {
		s.next--
	}
	if s.next >= len(s.ring) {
		s.next = 0
	}
}

// forgetLocked drops an idle host, so the map holds only hosts in use.
func (s *slots) forgetLocked(host string, q *hostQueue) {
	if q.running == 0 && len(q.waiters) == 0 {
		delete(s.hosts, host)
	}
}
