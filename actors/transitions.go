package actors

import (
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

// applyAll applies events in order. An event that does not fit is an engine
// bug: it is logged and skipped.
func (r *registry) applyAll(ctx actor.Context, evs []messages.Event) {
	for _, ev := range evs {
		if err := r.store.apply(ev); err != nil {
			r.core.log.Error().Err(err).Str("job_id", ev.Subject()).Msg("job event not applied")
			continue
		}
		if e, ok := ev.(messages.JobEvicted); ok {
			r.settleWaiters(ctx, e.ID)
		}
	}
}

// progress records a progress report: Queued → Running is "started",
// Running → Running is "progress"; a terminal job ignores it.
func (r *registry) progress(ctx actor.Context, id, desc string) {
	rec, ok := r.store.jobs[id]
	if !ok || rec.snap.State.IsTerminal() {
		r.core.log.Warn().Str("job_id", id).Msg("progress update ignored; job no longer active")
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

// seal records a terminal outcome for a non-terminal job and performs its
// consequences: node release, batch notification, waiters.
func (r *registry) seal(ctx actor.Context, rec *record, out messages.Outcome) {
	s := r.store
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
	k := nodeKey{rec.snap.RackID, rec.snap.NodeID}
	locked := rec.snap.NodeID != "" && slices.Contains(s.byNode[k], id)
	if locked {
		evs = append(evs, messages.NodeReleased{RackID: k.rack, NodeID: k.node, JobID: id})
	}
	r.applyAll(ctx, evs)
	if out.State == messages.StateCompleted {
		r.core.log.Info().Str("job_id", id).Str("description", out.Description).Msg("job completed")
	} else {
		r.core.log.Info().Str("job_id", id).Str("description", out.Message).Str("error_code", out.Code.String()).Msg("job failed")
	}
	if locked {
		r.releaseLockActor(ctx, k, id)
	}
	rec.worker = nil      // its Terminated is now irrelevant; drop the PID early
	if rec.batch != nil { // a parent sealed: its batch actor is done
		r.forget(rec.batch)
		ctx.Stop(rec.batch)
		rec.batch = nil
	}
	if p := rec.snap.ParentID; p != "" {
		if parent, ok := s.jobs[p]; ok && parent.batch != nil {
			ctx.Send(parent.batch, &childFinished{snap: rec.snapshot()})
		}
	}
	r.settleWaiters(ctx, id)
}

// releaseLockActor stops the node's lock actor when the node is free, or
// drops one holder from it otherwise.
func (r *registry) releaseLockActor(ctx actor.Context, k nodeKey, jobID string) {
	if len(r.store.byNode[k]) == 0 {
		delete(r.store.pendingLocks, k) // a late lockSpawned is then stopped
	}
	pid, ok := r.store.locks[k]
	if !ok {
		return
	}
	if len(r.store.byNode[k]) > 0 {
		ctx.Send(pid, &lockRelease{jobID: jobID})
		return
	}
	delete(r.store.locks, k)
	r.forget(pid)
	ctx.Stop(pid)
}

// settleWaiters answers AwaitTerminal requests waiting on id.
func (r *registry) settleWaiters(ctx actor.Context, id string) {
	ws, ok := r.store.waiters[id]
	if !ok {
		return
	}
	delete(r.store.waiters, id)
	for _, w := range ws {
		w.remaining--
		if w.remaining == 0 {
			ctx.Send(w.to, &messages.AwaitTerminalReply{})
		}
	}
}

func (r *registry) awaitTerminal(ctx actor.Context, m *messages.AwaitTerminal) {
	if r.store.closing {
		ctx.Respond(&messages.AwaitTerminalReply{Err: messages.ErrEngineClosed})
		return
	}
	w := &awaiter{to: ctx.Sender()}
	for _, id := range m.IDs {
		if rec, ok := r.store.jobs[id]; ok && !rec.snap.State.IsTerminal() {
			w.remaining++
			r.store.waiters[id] = append(r.store.waiters[id], w)
		}
	}
	if w.remaining == 0 {
		ctx.Respond(&messages.AwaitTerminalReply{})
	}
}

// refreshParent aggregates an open typed parent from its children: it seals
// the parent once every child is terminal or gone, and otherwise keeps its
// in-progress description current.
func (r *registry) refreshParent(ctx actor.Context, rec *record) {
	view, ok := aggregateBatch(&rec.snap, func(id string) (*messages.JobSnapshot, bool) {
		c, ok := r.store.jobs[id]
		if !ok {
			return nil, false
		}
		return &c.snap, true
	})
	if !ok {
		return
	}
	if view.outcome != nil {
		r.seal(ctx, rec, *view.outcome)
		return
	}
	r.progress(ctx, rec.snap.ID, view.description)
}

func (r *registry) getJob(ctx actor.Context, m *messages.GetJob) *messages.GetJobReply {
	rec, ok := r.store.jobs[m.ID]
	if !ok {
		return &messages.GetJobReply{Err: messages.ErrJobNotFound}
	}
	if _, open := r.store.openParents[m.ID]; open {
		r.refreshParent(ctx, rec)
	}
	n := 1
	if m.IncludeChildren {
		n += len(rec.snap.ChildIDs)
	}
	out := make([]messages.JobSnapshot, 1, n)
	out[0] = rec.snapshot()
	if m.IncludeChildren {
		for _, id := range rec.snap.ChildIDs {
			c, ok := r.store.jobs[id]
			if !ok {
				r.core.log.Warn().Str("job_id", m.ID).Str("child_job_id", id).Msg("child job not found while building GetJobStatus response")
				continue
			}
			out = append(out, c.snapshot())
		}
	}
	return &messages.GetJobReply{Jobs: out}
}

func (r *registry) sealJob(ctx actor.Context, m *messages.SealJob) *messages.SealJobReply {
	rec, ok := r.store.jobs[m.ID]
	if !ok {
		return &messages.SealJobReply{Err: messages.ErrJobNotFound}
	}
	if rec.snap.State.IsTerminal() {
		r.core.log.Error().Str("job_id", m.ID).Msg("seal called for a job already in a terminal state")
		return &messages.SealJobReply{Job: rec.snapshot(), Err: messages.ErrJobTerminal}
	}
	if m.Outcome.State != messages.StateCompleted && m.Outcome.State != messages.StateFailed {
		return &messages.SealJobReply{Job: rec.snapshot(), Err: messages.ErrInvalidSpec}
	}
	r.seal(ctx, rec, m.Outcome)
	return &messages.SealJobReply{Job: rec.snapshot()}
}

func (r *registry) cancelJob(ctx actor.Context, m *messages.CancelJob) *messages.CancelJobReply {
	rec, ok := r.store.jobs[m.ID]
	if !ok {
		return &messages.CancelJobReply{Err: messages.ErrJobNotFound}
	}
	if rec.snap.State.IsTerminal() || rec.worker == nil {
		return &messages.CancelJobReply{}
	}
	ctx.Send(rec.worker, &cancelWork{})
	return &messages.CancelJobReply{Signalled: true}
}

// beginShutdown refuses new jobs from now on and cancels every non-terminal
// leaf that has a workflow.
func (r *registry) beginShutdown(ctx actor.Context) *messages.BeginShutdownReply {
	if !r.store.shuttingDown {
		r.applyAll(ctx, []messages.Event{messages.ShutdownBegun{At: r.core.now()}})
	}
	var ids []string
	for id, rec := range r.store.jobs {
		if rec.leaf && !rec.snap.State.IsTerminal() {
			ids = append(ids, id)
			if rec.worker != nil {
				ctx.Send(rec.worker, &cancelWork{})
			}
		}
	}
	slices.Sort(ids)
	return &messages.BeginShutdownReply{Signalled: ids}
}

// reap runs one reaper pass: refresh every open parent first (so a parent
// nobody polled becomes terminal, and a child is counted before it can be
// evicted), then evict expired terminal jobs.
func (r *registry) reap(ctx actor.Context) int {
	for id := range r.store.openParents {
		if rec, ok := r.store.jobs[id]; ok {
			r.refreshParent(ctx, rec)
		}
	}
	evs := r.store.expiredEvictions(r.core.now(), r.core.ttl)
	r.applyAll(ctx, evs)
	return len(evs)
}
