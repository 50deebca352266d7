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

func (k pidKind) String() string {
	switch k {
	case kindJob:
		return "job"
	case kindLock:
		return "lock"
	case kindBatch:
		return "batch"
	default:
		return "unknown"
	}
}

// pidRef maps a watched PID back to the job or lease it serves.
type pidRef struct {
	kind pidKind
	job  string  // job id (job and batch actors)
	key  lockKey // lock actors
}

// registry is the JobRegistry actor: the only owner of the job index, the
// node and rack leases and the parents' child counts. Its state lives in a
// jobStore injected by the producer, so a restarted (panic) or respawned
// (stopped) registry resumes with every job and lease; on Started it
// re-watches every live actor and asks them to resend reports it may have
// missed.
type registry struct {
	store *jobStore
	core  *core
}

// Receive implements actor.Actor. A request that crashed an earlier
// instance is answered with ErrRegistryCrashed instead of being handled
// again.
func (r *registry) Receive(ctx actor.Context) {
	msg := ctx.Message()
	if r.store.poisoned.has(msg) {
		ctx.Respond(&requestFailed{err: errRegistryCrashed(msg)})
		return
	}
	defer r.recoverRequest(ctx, msg)
	defer r.flushJournal()
	r.handle(ctx, msg)
	r.publishLoad()
}

func (r *registry) handle(ctx actor.Context, msg any) {
	switch m := msg.(type) {
	case *actor.Started:
		r.rebuild(ctx)
	case *messages.CreateJob:
		r.createJob(ctx, m)
	case *messages.CreateBatch:
		r.createBatch(ctx, m)
	case *messages.GetJob:
		rep, seq := r.getJob(m)
		r.respond(ctx, rep, seq, nil)
	case *messages.ListJobs:
		rep, seq := r.listJobs(m)
		r.respond(ctx, rep, seq, nil)
	case *messages.SealJob:
		r.respond(ctx, r.sealJob(ctx, m), r.lastSeq(), nil)
	case *messages.CancelJob:
		ctx.Respond(r.cancelJob(ctx, m))
	case *messages.AcquireLease:
		ctx.Respond(r.acquireLease(ctx, m))
	case *messages.ReleaseLease:
		r.releaseLease(ctx, m.ID)
		ctx.Respond(&messages.ReleaseLeaseReply{})
	case *messages.AwaitTerminal:
		r.awaitTerminal(ctx, m)
	case *awaitCheck:
		_, known := r.store.awaiters[m.waiterID]
		ctx.Respond(&awaitCheckReply{known: known, generation: r.store.generation})
	case *cancelAwait:
		r.dropAwaiter(m.waiterID)
	case *messages.BeginShutdown:
		ctx.Respond(r.beginShutdown(ctx))
	case *interruptJobs:
		r.respond(ctx, r.interruptJobs(ctx), r.lastSeq(), nil)
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
		r.holderGone(ctx, m.key, m.holder)
	case *leaseExpired:
		r.expireLease(ctx, m.key, m.holder)
	case *parentSettled:
		if rec, ok := r.store.jobs[m.id]; ok && !rec.snap.State.IsTerminal() {
			r.seal(ctx, rec, m.outcome)
		}
	case *actor.Terminated:
		r.terminated(ctx, m.Who)
	case *stopActors:
		ctx.Respond(r.stopActors(ctx))
	case *listActors:
		ctx.Respond(r.listActors(ctx))
	case *listHolds:
		ctx.Respond(r.listHolds())
	case *workflowReturned:
		r.workflowReturned(ctx, m.id)
		ctx.Respond(&workflowReturnedAck{})
	case *quarantineCheck:
		r.checkQuarantine(m.id)
	case *releaseQuarantine:
		r.respond(ctx, r.releaseQuarantined(ctx, m.id), r.lastSeq(), nil)
	default:
		crashIfAsked(m)
	}
}

// rebuild re-establishes runtime links after a (re)start.
func (r *registry) rebuild(ctx actor.Context) {
	s := r.store
	s.generation++
	if s.halfTurn {
		s.halfTurn = false
		r.reconcile(ctx)
	}
	if s.replayed {
		s.replayed = false
		r.recoverInterrupted(ctx)
	}
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
	for _, l := range s.leases {
		if l.lock == nil {
			r.spawnLock(ctx, l)
		}
	}
	r.checkOverdue(r.core.now())
}

// terminated handles the end of a watched actor; duplicates are ignored.
func (r *registry) terminated(ctx actor.Context, who *actor.PID) {
	s := r.store
	ref, ok := s.pidRefs[who.Id]
	if !ok {
		return
	}
	r.forget(who)
	switch ref.kind {
	case kindJob:
		if rec, ok := s.jobs[ref.job]; ok && rec.worker != nil && rec.worker.Id == who.Id {
			rec.worker = nil
		}
		ctx.Send(ctx.Self(), &checkAbandoned{id: ref.job})
	case kindLock:
		if l, ok := s.leases[ref.key]; ok && l.lock != nil && l.lock.Id == who.Id {
			l.lock = nil
			if !s.closing {
				r.spawnLock(ctx, l) // the lease itself lives in the store
			}
		}
	case kindBatch:
		if rec, ok := s.jobs[ref.job]; ok && rec.batch != nil && rec.batch.Id == who.Id {
			rec.batch = nil
			if _, open := s.openParents[ref.job]; open && !s.closing {
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
	r.stopQuarantineTimers()
	for id := range s.awaiters {
		r.answerAwaiter(ctx, id, messages.ErrEngineClosed)
	}
	out := make([]*actor.PID, 0, len(s.pids))
	for _, pid := range s.pids {
		out = append(out, pid)
		r.forget(pid)
		ctx.Stop(pid)
	}
	for _, l := range s.leases {
		l.lock = nil
	}
	for _, rec := range s.jobs {
		rec.batch = nil
	}
	return &stopActorsReply{pids: out}
}
