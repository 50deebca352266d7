package actors

import (
	"github.com/rmsd/rmsd/messages"
)

// observeAdmitted tells the observer that rec was admitted. Reservation
// children are bookkeeping, not workflows: they are never reported.
func (r *registry) observeAdmitted(rec *record) {
	r.observe(rec, messages.StateQueued, messages.ErrorUnspecified)
}

// observeSealed tells the observer that rec reached its terminal outcome.
func (r *registry) observeSealed(rec *record, out messages.Outcome) {
	code := messages.ErrorUnspecified
	if out.State == messages.StateFailed {
		code = out.Code
	}
	r.observe(rec, out.State, code)
}

// observe runs the observer on the registry's turn; Options.OnJob promises
// it is cheap, so nothing is queued or copied beyond the observation.
func (r *registry) observe(rec *record, state messages.JobState, code messages.JobError) {
	fn := r.core.onJob
	if fn == nil || rec.reservation {
		return
	}
	t := rec.snap.Type
	if t == messages.TypeNone && rec.snap.ParentID != "" {
		if p, ok := r.store.jobs[rec.snap.ParentID]; ok {
			t = p.snap.Type
		}
	}
	o := messages.JobObservation{Type: t, Leaf: rec.leaf, State: state, Code: code}
	if state.IsTerminal() && !rec.snap.CreatedAt.IsZero() && rec.snap.UpdatedAt.After(rec.snap.CreatedAt) {
		// The seal has just stamped UpdatedAt.
		o.Duration = rec.snap.UpdatedAt.Sub(rec.snap.CreatedAt)
	}
	fn(o)
}

// publishLoad records the sizes of the registry's index after a turn, for
// Engine.Load to read without asking the registry.
func (r *registry) publishLoad() {
	r.core.trackedJobs.Store(int64(len(r.store.jobs)))
	r.core.heldNodes.Store(int64(len(r.store.leases)))
	r.core.quarantinedJobs.Store(int64(r.store.quarantinedJobs))
	r.core.inFlightJobs.Store(int64(r.store.inFlightCount() - r.store.reservationsInFlight))
}

// Load returns the number of job records the registry keeps (terminal ones
// included) and the number of nodes (and racks) held by jobs and
// operations, as of the end of the registry's last turn. It reads two
// counters and never waits for the registry, so a metrics scrape cannot
// stall it.
func (e *Engine) Load() (trackedJobs, heldNodes int) {
	return int(e.core.trackedJobs.Load()), int(e.core.heldNodes.Load())
}

// QuarantinedJobs returns how many jobs are quarantined (their cancelled
// workflow has not returned within the quarantine bound, so their nodes
// stay held), as of the end of the registry's last turn. Like Load it
// reads a counter and never waits for the registry.
func (e *Engine) QuarantinedJobs() int { return int(e.core.quarantinedJobs.Load()) }

// InFlight returns how many jobs are not terminal (queued or running,
// batch parents included, reservation children aside), as of the end of
// the registry's last turn. Like Load it never waits for the registry: a
// cluster member reads it to tell a rack with nothing in flight.
func (e *Engine) InFlight() int { return int(e.core.inFlightJobs.Load()) }
