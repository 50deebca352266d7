package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// pidKind says what an engine actor watched by the registry is.
type pidKind uint8

const (
	kindJob pidKind = iota + 1
	kindLock
	kindBatch
)

// pidRef maps a watched PID back to the job or node it serves.
type pidRef struct {
	kind pidKind
	job  string
	node nodeKey
}

// awaiter is a pending AwaitTerminal request.
type awaiter struct {
	to        *actor.PID
	remaining int
}

// registry is the JobRegistry actor: the only owner of the job index. Its
// state lives in a jobStore injected by the producer, so a restarted (panic)
// or respawned (stopped) registry resumes with every job and node lock; on
// Started it re-watches every live actor and asks job actors to resend
// reports it may have missed.
type registry struct {
	store *jobStore
	core  *core
}

// Receive implements actor.Actor.
func (r *registry) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		r.rebuild(ctx)
	case *messages.CreateJob:
		r.createJob(ctx, m)
	case *messages.CreateBatch:
		r.createBatch(ctx, m)
	case *messages.GetJob:
		ctx.Respond(r.getJob(ctx, m))
	case *messages.SealJob:
		ctx.Respond(r.sealJob(ctx, m))
	case *messages.CancelJob:
		ctx.Respond(r.cancelJob(ctx, m))
	case *messages.AwaitTerminal:
		r.awaitTerminal(ctx, m)
	case *messages.BeginShutdown:
		ctx.Respond(r.beginShutdown(ctx))
	case *messages.ReapExpired:
		ctx.Respond(&messages.ReapExpiredReply{Evicted: r.reap(ctx)})
	case *reapTick:
		r.reap(ctx)
	case *jobProgress:
		r.progress(ctx, m.id, m.description)
	case *jobFinished:
		if rec, ok := r.store.jobs[m.id]; ok && !rec.snap.State.IsTerminal() {
			r.seal(ctx, rec, m.outcome)
		}
		if ctx.Sender() != nil {
			ctx.Respond(&finishAck{})
		}
	case *checkAbandoned:
		r.checkAbandoned(ctx, m.id)
	case *lockHolderGone:
		r.checkAbandoned(ctx, m.jobID)
	case *lockSpawned:
		r.lockReported(ctx, m)
	case *parentSettled:
		if rec, ok := r.store.jobs[m.id]; ok && !rec.snap.State.IsTerminal() {
			r.seal(ctx, rec, m.outcome)
		}
	case *actor.Terminated:
		r.terminated(ctx, m.Who)
	case *stopActors:
		ctx.Respond(r.stopActors(ctx))
	case *listActors:
		ctx.Respond(r.listActors())
	default:
		crashIfAsked(m)
	}
}

// rebuild re-establishes runtime links after a (re)start.
func (r *registry) rebuild(ctx actor.Context) {
	s := r.store
	for id := range s.pidRefs {
		pid := s.pids[id]
		ctx.Watch(pid) // a dead PID answers with Terminated(NotFound)
		ctx.Send(pid, &resync{registry: ctx.Self()})
	}
	for id, rec := range s.jobs {
		if rec.leaf && rec.worker == nil && !rec.snap.State.IsTerminal() {
			ctx.Send(ctx.Self(), &checkAbandoned{id: id})
		}
		if _, open := s.openParents[id]; open && rec.batch == nil {
			r.spawnBatch(ctx, rec)
		}
	}
	for k := range s.byNode {
		_, locked := s.locks[k]
		_, pending := s.pendingLocks[k] // its owner resends lockSpawned on resync
		if !locked && !pending {
			r.spawnLock(ctx, k)
		}
	}
}

// terminated handles the end of a watched actor; duplicates are ignored.
func (r *registry) terminated(ctx actor.Context, who *actor.PID) {
	s := r.store
	ref, ok := s.pidRefs[who.Id]
	if !ok {
		return
	}
	if s.closing { // engine Close: nothing is respawned, jobs are sealed
		r.forget(who)
		if ref.kind == kindJob {
			ctx.Send(ctx.Self(), &checkAbandoned{id: ref.job})
		}
		return
	}
	r.forget(who)
	switch ref.kind {
	case kindJob:
		if rec, ok := s.jobs[ref.job]; ok && rec.worker != nil && rec.worker.Id == who.Id {
			rec.worker = nil
			r.lockOwnerGone(ctx, rec)
		}
		ctx.Send(ctx.Self(), &checkAbandoned{id: ref.job})
	case kindLock:
		if pid, ok := s.locks[ref.node]; ok && pid.Id == who.Id {
			delete(s.locks, ref.node)
			if len(s.byNode[ref.node]) > 0 {
				r.spawnLock(ctx, ref.node) // the lock itself lives in the store
			}
		}
	case kindBatch:
		if rec, ok := s.jobs[ref.job]; ok && rec.batch != nil && rec.batch.Id == who.Id {
			rec.batch = nil
			if _, open := s.openParents[ref.job]; open {
				r.spawnBatch(ctx, rec)
			}
		}
	}
}

// checkAbandoned seals a leaf whose worker actor is gone without a terminal
// report.
func (r *registry) checkAbandoned(ctx actor.Context, id string) {
	rec, ok := r.store.jobs[id]
	if !ok || rec.snap.State.IsTerminal() || !rec.leaf {
		return
	}
	if rec.worker != nil {
		if _, alive := ctx.ActorSystem().ProcessRegistry.Get(rec.worker); alive {
			return
		}
	}
	r.seal(ctx, rec, messages.Failed(abandonedFailure()))
}

// remember records a PID the registry watches.
func (r *registry) remember(pid *actor.PID, ref pidRef) {
	r.store.pidRefs[pid.Id] = ref
	r.store.pids[pid.Id] = pid
}

func (r *registry) forget(pid *actor.PID) {
	delete(r.store.pidRefs, pid.Id)
	delete(r.store.pids, pid.Id)
}

// stopActors stops every job, lock and batch actor (engine Close).
func (r *registry) stopActors(ctx actor.Context) *stopActorsReply {
	s := r.store
	if !s.shuttingDown {
		r.applyAll(ctx, []messages.Event{messages.ShutdownBegun{At: r.core.now()}})
	}
	s.closing = true
	for id, ws := range s.waiters {
		delete(s.waiters, id)
		for _, w := range ws {
			if w.remaining > 0 {
				w.remaining = 0
				ctx.Send(w.to, &messages.AwaitTerminalReply{Err: messages.ErrEngineClosed})
			}
		}
	}
	out := make([]*actor.PID, 0, len(s.pids))
	for _, pid := range s.pids {
		out = append(out, pid)
		r.forget(pid)
		ctx.Stop(pid)
	}
	return &stopActorsReply{pids: out}
}

func (r *registry) listActors() *listActorsReply {
	out := &listActorsReply{lockedNodes: len(r.store.byNode)}
	for id, ref := range r.store.pidRefs {
		pid := r.store.pids[id]
		switch ref.kind {
		case kindJob:
			out.jobs = append(out.jobs, pid)
		case kindLock:
			out.locks = append(out.locks, pid)
		case kindBatch:
			out.batches = append(out.batches, pid)
		}
	}
	return out
}
