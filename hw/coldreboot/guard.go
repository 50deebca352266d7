package coldreboot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// From the moment the shelves go off, a run is never abandoned half-way.
// The start of an rmsd shutdown lets it go on; it ends early only when it
// is cancelled (CancelJob), stopped hard (the end of the drain window, its
// actor stopping), or when the drain window is about to end: then it stops
// the stage it is in and powers the shelves back on (the restore step,
// bounded by Timing.RestoreTimeout, on a context of its own) before it
// records how it ended.

// errDrainEnding stops a stage because the shutdown drain window leaves
// only the time the restore step needs.
var errDrainEnding = errors.New("the shutdown drain window is ending")

// guard is the context the stages past shelves-off run on, with what
// stops it early.
type guard struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	stopped  chan struct{}
	finished chan struct{}
}

// newGuard derives the guarded context from a workflow context: the start
// of a shutdown does not cancel it, a hard stop does, and so does the
// drain window (when known) running down to restore.
func newGuard(ctx context.Context, drainWindow, restore time.Duration) *guard {
	gctx, cancel := context.WithCancelCause(messages.ShieldFromShutdown(ctx))
	g := &guard{ctx: gctx, cancel: cancel, stopped: make(chan struct{}), finished: make(chan struct{})}
	go g.watch(ctx, drainWindow, restore)
	return g
}

// watch cancels the guarded context when rmsd's shutdown began drainWindow
// - restore ago. The window starts no earlier than the shutdown (which
// cancels soft), so this is never later than the hard stop.
func (g *guard) watch(soft context.Context, drainWindow, restore time.Duration) {
	defer close(g.finished)
	select {
	case <-soft.Done():
	case <-g.stopped:
		return
	}
	if drainWindow <= 0 || !errors.Is(context.Cause(soft), messages.ErrShuttingDown) {
		return // no window to anticipate; a hard stop cancels the guard itself
	}
	t := time.NewTimer(max(drainWindow-restore, 0))
	defer t.Stop()
	select {
	case <-t.C:
		g.cancel(errDrainEnding)
	case <-g.stopped:
	}
}

// stop ends the watch and releases the guarded context.
func (g *guard) stop() {
	close(g.stopped)
	<-g.finished
	g.cancel(nil)
}

// shutdown reports whether the guard ended because rmsd is stopping
// rather than because the job was cancelled.
func shutdown(cause error) bool {
	return errors.Is(cause, errDrainEnding) || errors.Is(cause, messages.ErrInterrupted) ||
		errors.Is(cause, messages.ErrShuttingDown)
}

// restore powers every shelf of the plan back on, within RestoreTimeout,
// on a context no stop has cancelled. It returns what the record says:
// "shelves restored" or "could not restore shelves: <reason>".
func (r *run) restore(ctx context.Context) string {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.t.restoreTimeout())
	defer cancel()
	if err := firstFailure("power shelf on", r.each(rctx, r.plan.Shelves, setPower(platform.PowerOn))); err != nil {
		return fmt.Sprintf("could not restore shelves: %v", err)
	}
	return "shelves restored"
}
