package racklease

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rmsd/rmsd/store"
)

// Holder is a member's ownership of one rack, kept alive by a goroutine of
// its own until Release.
type Holder struct {
	owners store.RackOwners
	rackID string
	ttl    time.Duration
	now    func() time.Time
	// ctx ends renewals in flight on Release (cancel).
	ctx    context.Context
	cancel context.CancelFunc

	mu    sync.Mutex
	lease store.RackLease
	// validUntil is the member's own deadline: it acts on the rack only
	// before it (the start of the last good renewal plus three quarters
	// of the lease).
	validUntil time.Time
	lostErr    error
	lostAt     time.Time

	lost     chan struct{}
	lostOnce sync.Once
	done     chan struct{}
}

// Options tune a Holder; the zero value is the production setting.
type Options struct {
	// Now is the member's clock; nil means time.Now.
	Now func() time.Time
}

// Acquire takes rackID for member with a lease of ttl and keeps it until
// Release or until it is lost. A rack another member holds is refused
// with a *store.RackHeldError.
func Acquire(ctx context.Context, owners store.RackOwners, rackID, member string, ttl time.Duration, o Options) (*Holder, error) {
	if ttl < 4*time.Millisecond {
		return nil, fmt.Errorf("racklease: lease of %s is too short", ttl)
	}
	h := &Holder{owners: owners, rackID: rackID, ttl: ttl, now: o.Now, lost: make(chan struct{}), done: make(chan struct{})}
	if h.now == nil {
		h.now = time.Now
	}
	start := h.now()
	lease, err := owners.AcquireRack(ctx, rackID, member, ttl)
	if err != nil {
		return nil, fmt.Errorf("racklease: acquire rack %s: %w", rackID, err)
	}
	h.lease, h.validUntil = lease, start.Add(h.actFor())
	h.ctx, h.cancel = context.WithCancel(context.Background())
	go h.keep()
	return h, nil
}

// actFor is how long after a renewal's start the member keeps acting.
func (h *Holder) actFor() time.Duration { return h.ttl - h.ttl/4 }

// Lease returns the lease held and whether the member may still act on
// the rack under it: false once it is lost, released, or past the
// member's own deadline (even before the goroutine has noticed).
func (h *Holder) Lease() (store.RackLease, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lease, h.lostErr == nil && h.now().Before(h.validUntil)
}

// Lost is closed once the member has stopped acting on the rack.
func (h *Holder) Lost() <-chan struct{} { return h.lost }

// LostAt returns when the member stopped acting and why (zero and nil
// while it still acts).
func (h *Holder) LostAt() (time.Time, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.lostAt, h.lostErr
}

// errReleased is why a released holder no longer acts.
var errReleased = errors.New("racklease: released")

// Release stops renewing and ends the lease in the store, if it is still
// the rack's, so that another member may take the rack at once.
// It waits for the goroutine to end.
func (h *Holder) Release(ctx context.Context) error {
	h.cancel()
	<-h.done
	lease, _ := h.Lease()
	h.markLost(errReleased)
	// Also when the member has stopped acting: the store may still hold
	// the lease (a renewal was slow, not refused). The store leaves a
	// lease that is no longer the rack's alone.
	if err := h.owners.ReleaseRack(ctx, lease); err != nil {
		return fmt.Errorf("racklease: release rack %s: %w", lease.RackID, err)
	}
	return nil
}

// markLost stops the member acting, once.
func (h *Holder) markLost(why error) {
	h.lostOnce.Do(func() {
		h.mu.Lock()
		h.lostErr, h.lostAt = why, h.now()
		h.mu.Unlock()
		close(h.lost)
	})
}

// keep renews the lease every quarter of its length until Release, and
// marks it lost when a renewal is refused or the member's deadline
// passes without a good one.
func (h *Holder) keep() {
	defer close(h.done)
	every := h.ttl / 4
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		h.mu.Lock()
		until := h.validUntil
		h.mu.Unlock()
		deadline := time.NewTimer(until.Sub(h.now()))
		select {
		case <-h.ctx.Done():
			deadline.Stop()
			return
		case <-deadline.C:
			h.markLost(fmt.Errorf("racklease: no renewal of rack %s succeeded within %s", h.rackID, h.actFor()))
			return
		case <-tick.C:
			deadline.Stop()
		}
		if err := h.renew(until); err != nil {
			h.markLost(err)
			return
		}
	}
}

// renew renews the lease once, bounded by the member's deadline. A
// failure to reach the store is not final (the next tick tries again); a
// refusal is.
func (h *Holder) renew(until time.Time) error {
	ctx, cancel := context.WithDeadline(h.ctx, until)
	defer cancel()
	start := h.now()
	h.mu.Lock()
	lease := h.lease
	h.mu.Unlock()
	next, err := h.owners.RenewRack(ctx, lease, h.ttl)
	switch {
	case err == nil:
		h.mu.Lock()
		h.lease, h.validUntil = next, start.Add(h.actFor())
		h.mu.Unlock()
		return nil
	case errors.Is(err, store.ErrNotOwner):
		return fmt.Errorf("racklease: renew rack %s: %w", lease.RackID, err)
	default:
		return nil
	}
}
