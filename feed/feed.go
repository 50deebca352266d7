// Package feed fans a publisher's changes out to subscribers without ever
// making the publisher wait: a subscriber whose buffer is full is dropped
// (its channel closed, Dropped set) and must reread the state it follows
// and subscribe again. The job engine's and the firmware catalog's change
// feeds are feeds of their own change types.
package feed

import (
	"sync"
	"sync/atomic"
)

// Feed is one publisher's fan-out. The zero value is ready to use; Close
// ends it.
type Feed[T any] struct {
	mu   sync.Mutex
	subs map[*Subscription[T]]struct{}
	// active mirrors len(subs), so a publisher can skip building changes
	// when nobody listens without taking the lock.
	active atomic.Int32
	closed bool
}

// Subscription is one reader of a Feed.
type Subscription[T any] struct {
	c       chan T
	dropped atomic.Bool
	feed    *Feed[T]
}

// C delivers the changes in the order they were published. It is closed
// by Close, by the feed's Close, or when the subscriber fell behind its
// buffer: then Dropped is true and changes were lost.
func (s *Subscription[T]) C() <-chan T { return s.c }

// Dropped reports whether the feed gave up on this subscriber because its
// buffer was full.
func (s *Subscription[T]) Dropped() bool { return s.dropped.Load() }

// Close ends the subscription and closes C. Safe to call more than once
// and after the feed dropped it.
func (s *Subscription[T]) Close() {
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	f.remove(s)
}

// remove closes s's channel if it is still subscribed; f.mu is held.
func (f *Feed[T]) remove(s *Subscription[T]) {
	if _, ok := f.subs[s]; !ok {
		return
	}
	delete(f.subs, s)
	f.active.Add(-1)
	close(s.c)
}

// Subscribe adds a reader with a buffer of n changes. After Close, the
// subscription comes back already closed.
func (f *Feed[T]) Subscribe(n int) *Subscription[T] {
	s := &Subscription[T]{c: make(chan T, max(n, 1)), feed: f}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		close(s.c)
		return s
	}
	if f.subs == nil {
		f.subs = make(map[*Subscription[T]]struct{})
	}
	f.subs[s] = struct{}{}
	f.active.Add(1)
	return s
}

// Listening reports whether anyone is subscribed, without the lock.
func (f *Feed[T]) Listening() bool { return f.active.Load() > 0 }

// Publish hands changes, in order, to every subscriber without waiting;
// a subscriber that cannot take all of them is dropped.
func (f *Feed[T]) Publish(changes ...T) {
	if len(changes) == 0 || !f.Listening() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		for _, c := range changes {
			select {
			case s.c <- c:
				continue
			default:
			}
			s.dropped.Store(true)
			f.remove(s)
			break
		}
	}
}

// Drop ends every subscription as if each had fallen behind (Dropped
// set): the publisher lost changes its subscribers needed, so they must
// reread the state. Later subscriptions are not affected.
func (f *Feed[T]) Drop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		s.dropped.Store(true)
		f.remove(s)
	}
}

// Close ends every subscription; later subscriptions come back closed.
func (f *Feed[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	for s := range f.subs {
		f.remove(s)
	}
}
