package actors

import (
	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// abandonedMessage is the message of a job whose worker ended without
// recording a terminal state.
const abandonedMessage = "job task exited before recording a terminal state"

func abandonedFailure() messages.Failure {
	f := messages.NewFailure(messages.ErrorInternal, abandonedMessage)
	f.Description = "Abandoned"
	return f
}

// reservationReleased is a reservation child's outcome when its parent ends.
func reservationReleased(t messages.JobType) messages.Outcome {
	return messages.Completed(t.BatchNoun()+" reservation released", `{"status":"completed"}`)
}

// applyAll applies events in order. An event that does not fit is an engine
// bug: it is logged and skipped.
//
// The durable ones go to the journal in one hand-over, and the records
// they touch remember the sequence a reply about them must wait for.
func (r *registry) applyAll(ctx actor.Context, evs []messages.Event) {
	j := r.core.journal
	var durable []messages.Event
	var fc *feedCollector
	if r.core.feed.Listening() {
		fc = &feedCollector{}
		defer fc.flush(r)
	}
	for _, ev := range evs {
		keep := j != nil && r.store.journaled(ev)
		if err := r.store.apply(ev); err != nil {
			r.core.log.Error().Err(err).Str("job_id", ev.Subject()).Msg("job event not applied")
			continue
		}
		if fc != nil {
			fc.note(r, ev)
		}
		if keep {
			durable = append(durable, ev)
		}
		if e, ok := ev.(messages.JobEvicted); ok {
			r.settleWaiters(ctx, e.ID)
		}
	}
	if len(durable) == 0 {
		return
	}
	r.store.unwritten = append(r.store.unwritten, durable...)
	seq := r.lastSeq() // the sequence these events get when the turn ends
	for _, ev := range durable {
		r.store.noteSeq(ev, seq)
	}
	r.maybeCompact()
}

// progress records a progress report: Queued → Running is "started",
// Running → Running is "progress"; a terminal job ignores it.
func (r *registry) progress(ctx actor.Context, id, desc string) {
	rec, ok := r.store.jobs[id]
	if !ok || rec.snap.State.IsTerminal() {
		r.core.log.Debug().Str("job_id", id).Msg("progress update ignored; job no longer active")
		return
	}
	now := r.core.now()
	if rec.snap.State == messages.StateQueued {
		r.applyAll(ctx, []messages.Event{messages.JobStarted{ID: id, Description: desc, At: now}})
		r.core.log.Info().Str("job_id", id).Str("description", desc).Msg("job started")
		return
	}
	if rec.snap.Description == desc {
		return
	}
	r.applyAll(ctx, []messages.Event{messages.JobProgressed{ID: id, Description: desc, At: now}})
	r.core.log.Debug().Str("job_id", id).Str("description", desc).Msg("job progress")
}

// terminalEvents returns the events that seal rec with out and, with
// release, free every hold it has.
func (r *registry) terminalEvents(rec *record, out messages.Outcome, release bool) []messages.Event {
	id := rec.snap.ID
	now := r.core.now()
	var evs []messages.Event
	if out.State == messages.StateCompleted {
		evs = append(evs, messages.JobCompleted{ID: id, Description: out.Description, ResultJSON: out.ResultJSON, At: now})
	} else {
		desc := out.Description
		if desc == "" {
			desc = "Failed"
		}
		evs = append(evs, messages.JobFailed{ID: id, Code: out.Code, Description: desc, Message: out.Message, ResultJSON: out.ResultJSON, At: now})
	}
	if release {
		for _, k := range rec.holds {
			evs = append(evs, messages.NodeReleased{RackID: k.rack, NodeID: k.node, Holder: id})
		}
	}
	return evs
}

// seal records a terminal outcome for a non-terminal job and performs its
// consequences in the same turn: its reservation children complete, every
// hold of the job and its reservations is released, its parent learns of
// it, its waiters are answered. So whoever sees the job terminal finds its
// nodes free, unless its workflow still runs (its actor died, or shutdown
// interrupted it): then the holds stay until the workflow returns
// (quarantine.go).
func (r *registry) seal(ctx actor.Context, rec *record, out messages.Outcome) {
	r.sealHolding(ctx, rec, out, rec.leaf && r.core.workflows.await(rec.snap.ID))
}

// sealHolding is seal; keep leaves every hold in place.
func (r *registry) sealHolding(ctx actor.Context, rec *record, out messages.Outcome, keep bool) {
	s := r.store
	var evs []messages.Event
	var released []*lease
	var kids []*record
	for _, cid := range rec.snap.ChildIDs {
		if c, ok := s.jobs[cid]; ok && c.reservation && !c.snap.State.IsTerminal() {
			kids = append(kids, c)
			if !keep {
				released = append(released, r.leasesOf(c)...)
			}
			evs = append(evs, r.terminalEvents(c, reservationReleased(rec.snap.Type), !keep)...)
		}
	}
	if !keep {
		released = append(released, r.leasesOf(rec)...)
	}
	evs = append(evs, r.terminalEvents(rec, out, !keep)...)
	r.applyAll(ctx, evs)
	if r.core.midSeal != nil {
		r.core.midSeal(rec.snap.ID)
	}
	if keep {
		r.awaitReturn(rec)
	} else {
		r.returned(rec)
	}
	r.logSealed(rec, out)
	r.observeSealed(rec, out)
	for _, l := range released {
		r.stopLock(ctx, l)
	}
	if rec.worker != nil { // its Terminated is now irrelevant
		r.forget(rec.worker)
		rec.worker = nil
	}
	if rec.batch != nil { // a parent sealed: its batch actor is done
		r.forget(rec.batch)
		ctx.Stop(rec.batch)
		rec.batch = nil
	}
	if plan := rec.cleanup; plan != nil && !rec.leaf { // a batch parent's plan
		rec.cleanup = nil
		r.startParentCleanup(rec.snap.ID, plan)
	}
	if p := rec.snap.ParentID; p != "" && !rec.reservation {
		r.childSealed(ctx, rec, p)
	}
	for _, c := range kids {
		r.settleWaiters(ctx, c.snap.ID)
	}
	r.settleWaiters(ctx, rec.snap.ID)
}

// leasesOf returns the leases a job holds.
func (r *registry) leasesOf(rec *record) []*lease {
	out := make([]*lease, 0, len(rec.holds))
	for _, k := range rec.holds {
		if l, ok := r.store.leases[k]; ok && l.holder == rec.snap.ID {
			out = append(out, l)
		}
	}
	return out
}

func (r *registry) logSealed(rec *record, out messages.Outcome) {
	id := rec.snap.ID
	if rec.reservation {
		r.core.log.Debug().Str("job_id", id).Str("state", out.State.String()).Msg("job sealed")
		return
	}
	if out.State == messages.StateCompleted {
		r.core.log.Info().Str("job_id", id).Str("rack_id", rec.snap.RackID).Str("node_id", rec.snap.NodeID).
			Str("description", out.Description).Msg("job completed")
		return
	}
	r.core.log.Info().Str("job_id", id).Str("rack_id", rec.snap.RackID).Str("node_id", rec.snap.NodeID).
		Str("description", out.Message).Str("error_code", out.Code.String()).Msg("job failed")
}

// childSealed hands a sealed batch child to its parent's batch actor and,
// when it was the last one, asks for the parent's verdict.
func (r *registry) childSealed(ctx actor.Context, child *record, parentID string) {
	p, ok := r.store.jobs[parentID]
	if !ok || p.snap.State.IsTerminal() || !p.isBatch() {
		return
	}
	if p.batch == nil {
		return // being respawned: the new actor is given every terminal child
	}
	ctx.Send(p.batch, &childFinished{index: child.index, snap: r.store.snapshot(child)})
	r.settleIfDone(ctx, p)
}

// settleIfDone asks an open batch parent's actor for its verdict once every
// child is terminal or gone.
func (r *registry) settleIfDone(ctx actor.Context, p *record) {
	if p.batch != nil && p.isBatch() && p.counts.done() == p.counts.total() {
		ctx.Send(p.batch, &settleBatch{counts: p.counts})
	}
}

// getJob answers a read, with the journal sequence the answer waits for.
func (r *registry) getJob(m *messages.GetJob) (*messages.GetJobReply, uint64) {
	rec, ok := r.store.jobs[m.ID]
	if !ok {
		return &messages.GetJobReply{Err: messages.ErrJobNotFound}, 0
	}
	seq := rec.seq
	n := 1
	if m.IncludeChildren {
		n += len(rec.snap.ChildIDs)
	}
	out := make([]messages.JobSnapshot, 1, n)
	out[0] = r.store.snapshot(rec)
	if m.IncludeChildren {
		for _, id := range rec.snap.ChildIDs {
			c, ok := r.store.jobs[id]
			if !ok {
				r.core.log.Warn().Str("job_id", m.ID).Str("child_job_id", id).Msg("child job not found while building GetJobStatus response")
				continue
			}
			out = append(out, r.store.snapshot(c))
			seq = max(seq, c.seq)
		}
	}
	return &messages.GetJobReply{Jobs: out}, seq
}

func (r *registry) sealJob(ctx actor.Context, m *messages.SealJob) *messages.SealJobReply {
	rec, ok := r.store.jobs[m.ID]
	if !ok {
		return &messages.SealJobReply{Err: messages.ErrJobNotFound}
	}
	if rec.snap.State.IsTerminal() {
		r.core.log.Error().Str("job_id", m.ID).Msg("seal called for a job already in a terminal state")
		return &messages.SealJobReply{Job: r.store.snapshot(rec), Err: messages.ErrJobTerminal}
	}
	if m.Outcome.State != messages.StateCompleted && m.Outcome.State != messages.StateFailed {
		return &messages.SealJobReply{Job: r.store.snapshot(rec), Err: messages.ErrInvalidSpec}
	}
	r.seal(ctx, rec, m.Outcome)
	return &messages.SealJobReply{Job: r.store.snapshot(rec)}
}

// beginShutdown refuses new jobs from now on and softly cancels every
// non-terminal leaf: a workflow in a step shielded from shutdown finishes
// it.
func (r *registry) beginShutdown(ctx actor.Context) *messages.BeginShutdownReply {
	if !r.store.shuttingDown {
		r.applyAll(ctx, []messages.Event{messages.ShutdownBegun{At: r.core.now()}})
	}
	var ids []string
	for id, rec := range r.store.jobs {
		if rec.leaf && !rec.snap.State.IsTerminal() {
			ids = append(ids, id)
			if rec.worker != nil {
				ctx.Send(rec.worker, &cancelWork{soft: true, cause: messages.ErrShuttingDown})
			}
		}
	}
	slices.Sort(ids)
	return &messages.BeginShutdownReply{Signalled: ids}
}

// interruptJobs ends the drain window: every job still running is sealed
// Failed, saying where it was (its hardware may be half-way through a
// change), and its workflow is stopped.
func (r *registry) interruptJobs(ctx actor.Context) *interruptJobsReply {
	out := &interruptJobsReply{}
	var ids []string
	for id, rec := range r.store.jobs {
		if rec.leaf && !rec.snap.State.IsTerminal() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		rec := r.store.jobs[id]
		if rec.snap.State.IsTerminal() { // sealed with an earlier one
			continue
		}
		stage := rec.snap.Description
		msg := fmt.Sprintf("interrupted by shutdown of rmsd at stage %q; the state of the hardware is unknown", stage)
		r.core.log.Error().Str("job_id", id).Str("rack_id", rec.snap.RackID).Str("node_id", rec.snap.NodeID).
			Str("stage", stage).Msg("job interrupted by shutdown; check the hardware it was changing")
		if rec.worker != nil {
			ctx.Send(rec.worker, &cancelWork{cause: messages.ErrInterrupted})
		}
		f := messages.NewFailure(messages.ErrorInternal, msg)
		f.Description = "Interrupted"
		r.seal(ctx, rec, messages.Failed(f))
		out.jobs = append(out.jobs, r.store.snapshot(rec))
	}
	return out
}

// reap runs one reaper pass: offer every finished batch its verdict again
// (a backstop: verdicts are event-driven), then evict expired terminal
// jobs and lapsed operation leases.
func (r *registry) reap(ctx actor.Context) int {
	for id := range r.store.openParents {
		if rec, ok := r.store.jobs[id]; ok {
			r.settleIfDone(ctx, rec)
		}
	}
	now := r.core.now()
	r.checkOverdue(now)
	for _, l := range r.store.leases {
		if !l.isJob() && !l.expires.IsZero() && now.After(l.expires) {
			r.expireLease(ctx, l.key, l.holder)
		}
	}
	for id, op := range r.store.ops {
		if len(op.keys) == 0 && now.After(op.expires) {
			delete(r.store.ops, id) // a refused or lapsed lease nobody released
		}
	}
	evs := r.store.expiredEvictions(now, r.core.ttl)
	r.applyAll(ctx, evs)
	return len(evs)
}
