package download

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// rateSteps is how many samples a rate window is cut into: the rate is
// judged every window/rateSteps over the window that just ended.
const rateSteps = 10

// RateError is a transfer that received fewer bytes over the last window
// than the minimum rate asks; it matches ErrTooSlow.
type RateError struct {
	// Host is the host[:port] the bytes came from.
	Host string
	// Bytes is what arrived over the last Window.
	Bytes int64
	// Window is the span measured.
	Window time.Duration
	// Min is the minimum rate, in bytes per second.
	Min int64
}

// Error reads e.g. "transfer too slow: 10.0.0.5:8080 sent 3 bytes in the
// last 1m0s (0 bytes/s); the minimum is 65536 bytes/s".
func (e *RateError) Error() string {
	rate := float64(e.Bytes) / e.Window.Seconds()
	return fmt.Sprintf("transfer too slow: %s sent %d bytes in the last %s (%.0f bytes/s); the minimum is %d bytes/s "+
		"([workflows] min_download_bytes_per_second)", e.Host, e.Bytes, e.Window, rate, e.Min)
}

// Is matches ErrTooSlow.
func (e *RateError) Is(target error) bool { return target == ErrTooSlow }

// rateGuard cancels a transfer whose bytes over the last window fall below
// a minimum rate. Unlike the stall timer, arriving bytes do not restart
// it: it samples the count on a clock of its own, so a source that
// trickles a byte now and then fails one window after it starts.
type rateGuard struct {
	host   string
	min    int64
	step   time.Duration
	cancel context.CancelCauseFunc
	// count is the bytes read so far.
	count atomic.Int64

	mu      sync.Mutex
	samples []int64 // count at each of the last ticks, oldest first
	timer   *time.Timer
	stopped bool
}

// startRateGuard starts judging a transfer from host; stop ends it. A
// verdict cancels ctx (through cancel) with a *RateError.
func startRateGuard(host string, minRate int64, window time.Duration, cancel context.CancelCauseFunc) *rateGuard {
	g := &rateGuard{host: host, min: minRate, step: max(window/rateSteps, time.Millisecond), cancel: cancel, samples: []int64{0}}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.timer = time.AfterFunc(g.step, g.tick)
	return g
}

// add counts n bytes read.
func (g *rateGuard) add(n int) { g.count.Add(int64(n)) }

// tick samples the count and judges the last window once one has passed.
func (g *rateGuard) tick() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.samples = append(g.samples, g.count.Load())
	if len(g.samples) > rateSteps {
		g.samples = g.samples[len(g.samples)-rateSteps-1:]
		window := g.step * rateSteps
		got := g.samples[rateSteps] - g.samples[0]
		if float64(got) < float64(g.min)*window.Seconds() {
			g.stopped = true
			g.cancel(&RateError{Host: g.host, Bytes: got, Window: window, Min: g.min})
			return
		}
	}
	g.timer.Reset(g.step)
}

// stop ends the judging; no verdict follows it.
func (g *rateGuard) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	g.timer.Stop()
}
