package powerview

import (
	"sync"

	"github.com/rmsd/rmsd/hw"
)

// Stale is the queue of nodes whose firmware inventory is to be read
// again because something changed it (a firmware job on the node ended),
// in the order they were marked, each node at most once. Mark never
// waits; a Refresher with this queue reads them, ahead of its rounds.
// Safe for concurrent use.
type Stale struct {
	max  int
	wake chan struct{}

	mu      sync.Mutex
	queue   []hw.Node
	queued  map[hw.Ref]struct{}
	dropped int
}

// NewStale returns an empty queue holding at most max nodes (1,024 when
// max <= 0).
func NewStale(max int) *Stale {
	if max <= 0 {
		max = 1024
	}
	return &Stale{max: max, wake: make(chan struct{}, 1), queued: map[hw.Ref]struct{}{}}
}

// Mark queues n to be read again. It returns false when n is queued
// already (it is read once) or when the queue is full: then n is dropped
// and counted (Dropped), and its firmware shows what was last read.
func (s *Stale) Mark(n hw.Node) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.queued[n.Ref()]; ok {
		return false
	}
	if len(s.queue) >= s.max {
		s.dropped++
		return false
	}
	s.queue = append(s.queue, n)
	s.queued[n.Ref()] = struct{}{}
	select {
	case s.wake <- struct{}{}:
	default: // already awake
	}
	return true
}

// Dropped is how many marks a full queue dropped.
func (s *Stale) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// next takes the oldest node off the queue; false when it is empty.
func (s *Stale) next() (hw.Node, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return hw.Node{}, false
	}
	n := s.queue[0]
	s.queue[0] = hw.Node{}
	s.queue = s.queue[1:]
	delete(s.queued, n.Ref())
	return n, true
}
