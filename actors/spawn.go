package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// Where engine actors live. Job, lock and batch actors are top-level actors
// spawned through core.spawner, a root context with the noRestart guardian: they are not
// children of the registry, so restarting or stopping the registry never
// stops them, and a panic stops them instead of restarting them. The
// registry watches each of them.

// startLeaf spawns the job actor for an admitted leaf and arranges its node
// lock actor.
func (r *registry) startLeaf(ctx actor.Context, rec *record) {
	wf := rec.wf
	rec.wf = nil
	ja := &jobActor{
		id: rec.snap.ID, parentID: rec.snap.ParentID, rack: rec.snap.RackID, node: rec.snap.NodeID, registry: ctx.Self(),
		wf: wf, cleanup: rec.cleanup, core: r.core,
	}
	rec.cleanup = nil
	lockToSpawn := r.lockFor(rec)
	ja.spawnLock = lockToSpawn
	props := actor.PropsFromProducer(func() actor.Actor { return ja }, actor.WithMailbox(newInlineMailbox))
	r.core.workers.Add(1) // done by the worker goroutine the actor starts
	pid, err := r.core.spawner.SpawnNamed(props, "job-"+rec.snap.ID)
	if err != nil {
		r.core.workers.Done()
		r.core.log.Error().Err(err).Str("job_id", rec.snap.ID).Msg("spawn job actor")
		r.seal(ctx, rec, messages.Failed(abandonedFailure()))
		return
	}
	rec.worker = pid
	r.remember(pid, pidRef{kind: kindJob, job: rec.snap.ID})
	ctx.Watch(pid)
	if !lockToSpawn && rec.snap.NodeID != "" {
		if lock, ok := r.store.locks[nodeKey{rec.snap.RackID, rec.snap.NodeID}]; ok {
			ctx.Send(lock, &lockAcquire{jobID: rec.snap.ID, pid: pid})
		}
	}
}

// lockFor decides who provides a new leaf's node lock actor: an existing
// one (told after the spawn), one another job is already spawning (it is
// told when that one reports), or the new job's own actor, which spawns it
// off the registry's mailbox and reports it with lockSpawned.
func (r *registry) lockFor(rec *record) bool {
	if rec.snap.NodeID == "" {
		return false
	}
	k := nodeKey{rec.snap.RackID, rec.snap.NodeID}
	if _, ok := r.store.locks[k]; ok {
		return false
	}
	if _, ok := r.store.pendingLocks[k]; ok {
		return false
	}
	r.store.pendingLocks[k] = rec.snap.ID
	return true
}

// lockReported adopts the lock actor a job spawned for its node, or stops
// it when it is no longer wanted (node released, or another lock exists).
func (r *registry) lockReported(ctx actor.Context, m *lockSpawned) {
	s := r.store
	if cur, ok := s.locks[m.key]; ok && cur.Id == m.pid.Id {
		return // reported again after a resync
	}
	if s.closing {
		r.remember(m.pid, pidRef{kind: kindLock, node: m.key}) // stopped by Close
		return
	}
	owner, pending := s.pendingLocks[m.key]
	if !pending || owner != m.jobID || len(s.byNode[m.key]) == 0 || s.locks[m.key] != nil {
		ctx.Stop(m.pid)
		return
	}
	delete(s.pendingLocks, m.key)
	s.locks[m.key] = m.pid
	r.remember(m.pid, pidRef{kind: kindLock, node: m.key})
	ctx.Watch(m.pid)
	for _, id := range s.byNode[m.key] {
		if rec, ok := s.jobs[id]; ok && id != m.jobID && rec.worker != nil {
			ctx.Send(m.pid, &lockAcquire{jobID: id, pid: rec.worker})
		}
	}
}

// lockOwnerGone handles the death of a job actor that was to spawn its
// node's lock: the registry spawns the lock itself if the node stays locked.
func (r *registry) lockOwnerGone(ctx actor.Context, rec *record) {
	if rec.snap.NodeID == "" {
		return
	}
	k := nodeKey{rec.snap.RackID, rec.snap.NodeID}
	if r.store.pendingLocks[k] != rec.snap.ID {
		return
	}
	delete(r.store.pendingLocks, k)
	if len(r.store.byNode[k]) > 0 && r.store.locks[k] == nil {
		r.spawnLock(ctx, k)
	}
}

// spawnLock spawns the NodeLock actor for a locked node, holding every job
// the store lists on it.
func (r *registry) spawnLock(ctx actor.Context, k nodeKey) {
	holders := make(map[string]*actor.PID)
	for _, id := range r.store.byNode[k] {
		if rec, ok := r.store.jobs[id]; ok && rec.worker != nil {
			holders[id] = rec.worker
		}
	}
	la := &nodeLockActor{key: k, registry: ctx.Self(), holders: holders}
	props := actor.PropsFromProducer(func() actor.Actor { return la }, actor.WithMailbox(newInlineMailbox))
	pid := r.core.spawner.SpawnPrefix(props, "lock-")
	r.store.locks[k] = pid
	r.remember(pid, pidRef{kind: kindLock, node: k})
	ctx.Watch(pid)
}

// spawnBatch spawns the BatchParent actor of an open parent with the
// current state of its children.
func (r *registry) spawnBatch(ctx actor.Context, parent *record) {
	ba := &batchActor{registry: ctx.Self(), parent: parent.snapshot(), done: make(map[string]messages.JobSnapshot), missing: make(map[string]struct{})}
	for _, id := range parent.snap.ChildIDs {
		c, ok := r.store.jobs[id]
		switch {
		case !ok:
			ba.missing[id] = struct{}{}
		case c.snap.State.IsTerminal():
			ba.done[id] = c.snapshot()
		}
	}
	props := actor.PropsFromProducer(func() actor.Actor { return ba }, actor.WithMailbox(newInlineMailbox))
	pid := r.core.spawner.SpawnPrefix(props, "batch-")
	parent.batch = pid
	r.remember(pid, pidRef{kind: kindBatch, job: parent.snap.ID})
	ctx.Watch(pid)
}
