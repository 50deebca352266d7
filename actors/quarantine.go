package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// A job's holds end when its workflow has returned, not when its actor
// ends: a workflow may still be doing hardware I/O after its actor was
// stopped, or after shutdown interrupted it. Such a job is sealed (callers
// see it Failed) but keeps its holds until the worker reports the return
// (workflowReturned, sent straight to the registry and re-sent across
// registry restarts). A workflow that has not returned QuarantineAfter
// after it was cancelled is quarantined: flagged in its job status and the
// engine's listing, logged at error with its nodes, until it returns or an
// operator releases its holds (Engine.ReleaseQuarantined). A restart runs
// no workflow, so the journal keeps no quarantine: replay frees the holds
// of every terminal job.

// DefaultQuarantineAfter is Options.QuarantineAfter's default.
const DefaultQuarantineAfter = 60 * time.Second

// quarantineNote is added to a quarantined job's description.
const quarantineNote = " (quarantined: its workflow has not returned since it was cancelled; its nodes stay held)"

// ErrNotQuarantined refuses to release the holds of a job that is not
// quarantined.
var ErrNotQuarantined = errors.New("jobs: job is not quarantined")

// QuarantinedJob is a job whose cancelled workflow has not returned within
// the quarantine bound.
type QuarantinedJob struct {
	JobID  string
	RackID string
	NodeID string
	// State is the job's state: usually Failed (its actor died or shutdown
	// interrupted it), Running when it was cancelled and ignores it.
	State messages.JobState
	// Held lists what it still holds: "rack/node", or "rack" for a rack.
	Held []string
	// CancelledAt is when its workflow was cancelled.
	CancelledAt time.Time
}

// returnWatch is a record's wait for its cancelled workflow to return.
type returnWatch struct {
	awaiting    bool // sealed with its holds kept until the return
	cancelledAt time.Time
	quarantined bool
	timer       *time.Timer
}

// worker → registry, and the admin's release.
type (
	workflowReturned       struct{ id string }
	workflowReturnedAck    struct{}
	quarantineCheck        struct{ id string }
	releaseQuarantine      struct{ id string }
	releaseQuarantineReply struct {
		job QuarantinedJob
		err error
	}
)

// returnRetry spaces the attempts to report a workflow's return while the
// registry is being replaced.
const returnRetry = 10 * time.Millisecond

// reportReturned tells the registry that a job's workflow returned, until
// a registry acknowledges it or the engine closes.
func (c *core) reportReturned(id string) {
	for c.stopCtx.Err() == nil {
		if pid := c.registry.Load(); pid != nil {
			if _, err := c.spawner.RequestFuture(pid, &workflowReturned{id: id}, c.askTimeout).Result(); err == nil {
				return
			}
		}
		t := time.NewTimer(returnRetry)
		select {
		case <-c.stopCtx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// awaitReturn keeps a sealed job's holds until its workflow returns.
func (r *registry) awaitReturn(rec *record) {
	rec.ret.awaiting = true
	r.watchReturn(rec)
	r.core.log.Warn().Str("job_id", rec.snap.ID).Str("rack_id", rec.snap.RackID).Str("node_id", rec.snap.NodeID).
		Strs("held", r.heldBy(rec)).Msg("job ended while its workflow still runs; its nodes stay held until the workflow returns")
}

// watchReturn starts the quarantine clock of a cancelled workflow.
func (r *registry) watchReturn(rec *record) {
	if !rec.ret.cancelledAt.IsZero() {
		return
	}
	id, c := rec.snap.ID, r.core
	rec.ret.cancelledAt = c.now()
	r.store.cancelled[id] = struct{}{}
	rec.ret.timer = time.AfterFunc(c.quarantineAfter, func() {
		if pid := c.registry.Load(); pid != nil {
			c.spawner.Send(pid, &quarantineCheck{id: id})
		}
	})
}

// returned ends a record's wait for its workflow.
func (r *registry) returned(rec *record) {
	if rec.ret.timer != nil {
		rec.ret.timer.Stop()
	}
	if rec.ret.quarantined {
		r.store.quarantinedJobs--
	}
	rec.ret = returnWatch{}
	delete(r.store.cancelled, rec.snap.ID)
}

// workflowReturned releases the holds a sealed job kept for its workflow.
func (r *registry) workflowReturned(ctx actor.Context, id string) {
	rec, ok := r.store.jobs[id]
	if !ok || !rec.ret.awaiting {
		return
	}
	held := r.heldBy(rec)
	if rec.ret.quarantined {
		r.core.log.Warn().Str("job_id", id).Str("rack_id", rec.snap.RackID).Str("node_id", rec.snap.NodeID).
			Strs("held", held).Msg("quarantined job's workflow returned; its nodes are released")
	}
	r.releaseHeld(ctx, rec)
	r.returned(rec)
}

// releaseHeld frees every hold of a job and of its reservation children.
func (r *registry) releaseHeld(ctx actor.Context, rec *record) {
	holders := []*record{rec}
	for _, cid := range rec.snap.ChildIDs {
		if c, ok := r.store.jobs[cid]; ok && c.reservation {
			holders = append(holders, c)
		}
	}
	var evs []messages.Event
	var ls []*lease
	for _, h := range holders {
		for _, l := range r.leasesOf(h) {
			ls = append(ls, l)
			evs = append(evs, messages.NodeReleased{RackID: l.key.rack, NodeID: l.key.node, Holder: h.snap.ID})
		}
	}
	r.applyAll(ctx, evs)
	for _, l := range ls {
		r.stopLock(ctx, l)
	}
}

// heldBy names what a job and its reservation children hold, sorted.
func (r *registry) heldBy(rec *record) []string {
	var out []string
	add := func(h *record) {
		for _, k := range h.holds {
			if k.node == "" {
				out = append(out, k.rack)
			} else {
				out = append(out, k.rack+"/"+k.node)
			}
		}
	}
	add(rec)
	for _, cid := range rec.snap.ChildIDs {
		if c, ok := r.store.jobs[cid]; ok && c.reservation {
			add(c)
		}
	}
	slices.Sort(out)
	return out
}

// checkQuarantine quarantines a cancelled job whose workflow still runs.
func (r *registry) checkQuarantine(id string) {
	rec, ok := r.store.jobs[id]
	if !ok || rec.ret.quarantined || rec.ret.cancelledAt.IsZero() || !r.core.workflows.running(id) {
		return
	}
	rec.ret.quarantined = true
	r.store.quarantinedJobs++
	r.core.log.Error().Str("job_id", id).Str("rack_id", rec.snap.RackID).Str("node_id", rec.snap.NodeID).
		Strs("held", r.heldBy(rec)).Dur("after_ms", r.core.quarantineAfter).
		Msg("job quarantined: its workflow has not returned since it was cancelled; its nodes stay held until it does or an operator releases them")
}

// checkOverdue quarantines every cancelled workflow whose bound has passed
// at now: a backstop for a check lost while the registry restarted.
func (r *registry) checkOverdue(now time.Time) {
	for id := range r.store.cancelled {
		rec, ok := r.store.jobs[id]
		if !ok {
			delete(r.store.cancelled, id)
			continue
		}
		if now.Sub(rec.ret.cancelledAt) >= r.core.quarantineAfter {
			r.checkQuarantine(id)
		}
	}
}

// stopQuarantineTimers stops every quarantine clock (engine Close).
func (r *registry) stopQuarantineTimers() {
	for id := range r.store.cancelled {
		if rec, ok := r.store.jobs[id]; ok && rec.ret.timer != nil {
			rec.ret.timer.Stop()
		}
	}
}

// quarantined lists the quarantined jobs, by id.
func (r *registry) quarantined() []QuarantinedJob {
	var out []QuarantinedJob
	for id := range r.store.cancelled {
		if rec, ok := r.store.jobs[id]; ok && rec.ret.quarantined {
			out = append(out, r.quarantinedJob(rec))
		}
	}
	slices.SortFunc(out, func(a, b QuarantinedJob) int {
		switch {
		case a.JobID < b.JobID:
			return -1
		case a.JobID > b.JobID:
			return 1
		}
		return 0
	})
	return out
}

func (r *registry) quarantinedJob(rec *record) QuarantinedJob {
	return QuarantinedJob{JobID: rec.snap.ID, RackID: rec.snap.RackID, NodeID: rec.snap.NodeID,
		State: rec.snap.State, Held: r.heldBy(rec), CancelledAt: rec.ret.cancelledAt}
}

// releaseQuarantined frees a quarantined job's holds on an operator's
// word: a job still open is sealed Failed first. Its workflow keeps
// running; its return changes nothing any more.
func (r *registry) releaseQuarantined(ctx actor.Context, id string) *releaseQuarantineReply {
	rec, ok := r.store.jobs[id]
	if !ok {
		return &releaseQuarantineReply{err: messages.ErrJobNotFound}
	}
	if !rec.ret.quarantined {
		return &releaseQuarantineReply{err: ErrNotQuarantined}
	}
	q := r.quarantinedJob(rec)
	if !rec.snap.State.IsTerminal() {
		f := messages.NewFailure(messages.ErrorInternal,
			"released by an operator while quarantined: its workflow had not returned after it was cancelled; the state of the hardware is unknown")
		f.Description = "Released"
		r.sealHolding(ctx, rec, messages.Failed(f), false)
	} else {
		r.releaseHeld(ctx, rec)
		r.returned(rec)
	}
	r.core.log.Warn().Str("job_id", id).Str("rack_id", q.RackID).Str("node_id", q.NodeID).Strs("released", q.Held).
		Msg("audit: operator released a quarantined job's nodes while its workflow still runs")
	q.State = rec.snap.State
	return &releaseQuarantineReply{job: q}
}

// ReleaseQuarantined frees the holds of a quarantined job (its workflow
// did not return after it was cancelled) on an operator's word, sealing it
// Failed if it was still open, and returns what it held. The workflow may
// still touch the hardware: the operator answers for it. A job that is not
// quarantined is refused with ErrNotQuarantined.
func (e *Engine) ReleaseQuarantined(ctx context.Context, id string) (QuarantinedJob, error) {
	res, err := e.ask(ctx, &releaseQuarantine{id: id})
	if err != nil {
		return QuarantinedJob{}, fmt.Errorf("release quarantined job %s: %w", id, err)
	}
	rep := res.(*releaseQuarantineReply)
	if rep.err != nil {
		return QuarantinedJob{}, fmt.Errorf("release quarantined job %s: %w", id, rep.err)
	}
	return rep.job, nil
}
