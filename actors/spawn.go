package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// Where engine actors live. Job, lock and batch actors are top-level actors
// spawned through core.spawner, a root context with the noRestart guardian:
// they are not children of the registry, so restarting or stopping the
// registry never stops them, and a panic stops them instead of restarting
// them. The registry watches each of them. Every engine actor uses
// protoactor's default mailbox, run by the engine's dispatcher: no actor's
// handler ever runs inside another actor's handler.

func (c *core) props(a actor.Actor) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return a },
		append(withHandlerMiddleware(), actor.WithDispatcher(c.dispatcher))...)
}

// startLeaf spawns the job actor for an admitted leaf and the lock actors
// of its holds. A job that holds nothing is watched by the registry itself.
func (r *registry) startLeaf(ctx actor.Context, rec *record) {
	j := r.core.journal
	ja := &jobActor{
		id: rec.snap.ID, parentID: rec.snap.ParentID, registry: ctx.Self(),
		wf: rec.wf, cleanup: rec.cleanup, core: r.core, gated: j != nil,
	}
	rec.wf, rec.cleanup = nil, nil
	r.core.workers.Add(1) // done by the worker goroutine the actor starts
	pid, err := r.core.spawner.SpawnNamed(r.core.props(ja), "job-"+rec.snap.ID)
	if err != nil {
		r.core.workers.Done()
		r.core.log.Error().Err(err).Str("job_id", rec.snap.ID).Msg("spawn job actor")
		r.seal(ctx, rec, messages.Failed(abandonedFailure()))
		return
	}
	rec.worker = pid
	r.remember(pid, pidRef{kind: kindJob, job: rec.snap.ID})
	if ja.gated {
		// The workflow starts once the job's creation is in the journal;
		// should the store fail first, the job ends without running.
		j.reply(deferredReply{seq: rec.seq, to: pid, msg: &startWork{},
			failed: &cancelWork{cause: messages.ErrStoreUnavailable}})
	}
	if len(rec.holds) == 0 {
		ctx.Watch(pid)
		return
	}
	// The lock actors of its holds watch it and report its end; the
	// registry need not watch it too.
	r.spawnLocksOf(ctx, rec)
}

// spawnLocksOf spawns the lock actor of every lease a job holds.
func (r *registry) spawnLocksOf(ctx actor.Context, rec *record) {
	for _, l := range r.leasesOf(rec) {
		r.spawnLock(ctx, l)
	}
}

// spawnLock spawns the NodeLock actor of a lease. A job's lease watches the
// job's actor (its parent's, for a reservation child).
func (r *registry) spawnLock(ctx actor.Context, l *lease) {
	la := &nodeLockActor{
		registry: ctx.Self(), now: r.core.now,
		grant: leaseGrant{key: l.key, holder: l.holder, operation: l.operation, since: l.since, expires: l.expires},
	}
	if l.isJob() {
		if rec, ok := r.store.jobs[l.holder]; ok {
			if rec.reservation {
				rec = r.store.jobs[rec.snap.ParentID]
			}
			if rec != nil {
				la.watch = rec.worker
			}
		}
	}
	pid := r.core.spawner.SpawnPrefix(r.core.props(la), "lock-")
	l.lock = pid
	r.remember(pid, pidRef{kind: kindLock, job: l.holder, key: l.key})
	ctx.Watch(pid)
}

// spawnBatch spawns the BatchParent actor of an open batch parent, handing
// it every child already terminal; if they all are, it settles at once.
func (r *registry) spawnBatch(ctx actor.Context, parent *record) {
	if !parent.isBatch() {
		return // an untyped parent is never aggregated
	}
	ba := &batchActor{registry: ctx.Self(), parentID: parent.snap.ID, typ: parent.snap.Type}
	for _, id := range parent.snap.ChildIDs {
		if c, ok := r.store.jobs[id]; ok && !c.reservation && c.snap.State.IsTerminal() {
			ba.add(c.index, &c.snap)
		}
	}
	pid := r.core.spawner.SpawnPrefix(r.core.props(ba), "batch-")
	parent.batch = pid
	r.remember(pid, pidRef{kind: kindBatch, job: parent.snap.ID})
	ctx.Watch(pid)
	r.settleIfDone(ctx, parent)
}
