package storetest

import (
	"sync"
	"time"
)

// SettableClock is a manual clock for tests (a store's now of
// Backend.Open, an engine's clock) that stands still until set or
// advanced: tests age heartbeats, leases and records without waiting.
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

// Advance moves the clock d forward.
func (c *SettableClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
