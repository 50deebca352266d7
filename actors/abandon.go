package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/messages"
)

// Abandoning an engine, in cluster mode: its member no longer owns the rack
// whose jobs it runs (the rack's lease was lost or handed over), so every
// write it would make is refused by the store, and the rack's new owner
// replays the rack's journal and seals the jobs this engine left running.
// The engine therefore stops acting at once, says nothing more to its
// journal, and does not seal its jobs itself.

// abandonment is why an engine was abandoned.
type abandonment struct {
	// cause is given to every workflow's context (context.Cause).
	cause error
	// refusal answers every admission from then on.
	refusal error
}

// Abandon gives the engine up: from the call on every admission is refused
// with an error matching messages.ErrNotOwner and messages.ErrStoreUnavailable,
// nothing more is written to the journal (what is queued is dropped, the
// replies waiting for a commit are answered with their failure), and every
// workflow's context is cancelled with cause (nil: messages.ErrNotOwner).
// Jobs are not sealed: the rack's new owner does that when it replays the
// journal. Abandon returns once the workflows have returned, or after
// DefaultCloseTimeout (those still running are named in the log). After
// Abandon, Close does nothing; after Close, Abandon does nothing.
func (e *Engine) Abandon(cause error) { e.abandonWithin(cause, DefaultCloseTimeout) }

// abandonWithin is Abandon bounded by d.
func (e *Engine) abandonWithin(cause error, d time.Duration) {
	e.closeOnce.Do(func() {
		deadline := time.Now().Add(d)
		if cause == nil {
			cause = messages.ErrNotOwner
		}
		e.core.abandoned.Store(&abandonment{
			cause: cause,
			refusal: fmt.Errorf("job refused: this member no longer owns the rack (%v); the rack's new owner admits its jobs: %w (%w)",
				cause, messages.ErrNotOwner, messages.ErrStoreUnavailable),
		})
		if j := e.core.journal; j != nil {
			j.abandon()
		}
		close(e.reaperStop)
		<-e.reaperDone
		e.core.log.Warn().Err(cause).Int("jobs_in_flight", e.InFlight()).
			Msg("job engine abandoned: this member no longer owns the rack; its workflows are cancelled and nothing more is journaled")
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		// Stopping a job actor cancels its workflow's context with the
		// abandonment's cause (jobActor, Stopping).
		e.stopEverything(ctx, deadline)
	})
}
