package messages

import "context"

// A workflow's context is cancelled in two ways. A hard stop (an explicit
// cancel, the end of the shutdown drain window, the job's actor stopping)
// cancels everything. The start of a shutdown is softer: it cancels the
// context the workflow receives, with cause ErrShuttingDown, but a step
// that must not be abandoned half-way (a rack whose power shelves are off)
// can keep running on ShieldFromShutdown(ctx) until it is done or the drain
// window ends.

type hardStopKey struct{}

// WorkflowContext returns the context an engine hands a workflow: soft,
// which also ends when shutdown begins, carrying hard, which ends only on a
// hard stop. soft must be derived from hard. Only engines call it.
func WorkflowContext(soft, hard context.Context) context.Context {
	return context.WithValue(soft, hardStopKey{}, hard)
}

// ShieldFromShutdown returns the part of a workflow context that the start
// of a shutdown does not cancel; it still ends on a hard stop. For a
// context that did not come from WorkflowContext it returns ctx.
func ShieldFromShutdown(ctx context.Context) context.Context {
	if hard, ok := ctx.Value(hardStopKey{}).(context.Context); ok {
		return hard
	}
	return ctx
}
