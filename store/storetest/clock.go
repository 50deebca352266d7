package storetest

import (
	"sync"
	"time"
)

// SettableClock is a store clock (the now of Backend.Open) that stands
// still until set: tests age heartbeats and leases without waiting.
type SettableClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewSettableClock returns a clock standing at t.
func NewSettableClock(t time.Time) *SettableClock { return &SettableClock{t: t} }

// Now returns the time last set.
func (c *SettableClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *SettableClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}
