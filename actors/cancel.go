package actors

import (
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// cancelJob signals the workflow of a job and, for a batch parent (which
// has no workflow of its own), of every child that has not ended, each
// with the request's cause. Reservation children have no workflow: their
// coordinator's ends them. Nothing is released here: every hold stays
// until its job records a terminal state.
func (r *registry) cancelJob(ctx actor.Context, m *messages.CancelJob) *messages.CancelJobReply {
	rec, ok := r.store.jobs[m.ID]
	if !ok {
		return &messages.CancelJobReply{Err: messages.ErrJobNotFound}
	}
	if rec.snap.State.IsTerminal() {
		return &messages.CancelJobReply{Terminal: true}
	}
	cause := m.Cause
	if cause == nil {
		cause = errCancelled
	}
	n := 0
	signal := func(c *record) {
		if c.worker != nil && !c.snap.State.IsTerminal() {
			ctx.Send(c.worker, &cancelWork{cause: cause, named: true})
			r.watchReturn(c) // quarantined if it does not return in time
			n++
		}
	}
	signal(rec)
	for _, id := range rec.snap.ChildIDs {
		if c, ok := r.store.jobs[id]; ok && !c.reservation {
			signal(c)
		}
	}
	if n > 0 {
		r.core.log.Info().Str("job_id", m.ID).Int("jobs", n).Str("cause", cause.Error()).Msg("job cancelled")
	}
	return &messages.CancelJobReply{Signalled: n > 0, Jobs: n}
}

// namedCause makes a failed outcome of a job cancelled by request say why,
// whatever words its workflow found for it ("context canceled"): the
// cause leads the message unless the message already has it.
func namedCause(out messages.Outcome, cause error) messages.Outcome {
	if cause == nil || out.State != messages.StateFailed || strings.Contains(out.Message, cause.Error()) {
		return out
	}
	plain := out.ResultJSON == messages.FailureJSON(out.Code, out.Message)
	if out.Message == "" {
		out.Message = cause.Error()
	} else {
		out.Message = cause.Error() + ": " + out.Message
	}
	if plain { // the default failure document says the same
		out.ResultJSON = messages.FailureJSON(out.Code, out.Message)
	}
	return out
}
