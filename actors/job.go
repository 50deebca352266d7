package actors

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// jobActor runs one job's workflow in a goroutine it starts and cancels, and
// relays the workflow's reports to the registry. It delivers exactly one
// terminal report, re-sending it until the registry acknowledges it (the
// registry may be restarting), then stops itself. It is never restarted.
type jobActor struct {
	id, parentID string
	rack, node   string
	registry     *actor.PID
	wf           messages.Workflow
	cleanup      *messages.CleanupPlan
	core         *core

	spawnLock bool       // spawn this node's lock actor and report it
	lockPID   *actor.PID // the lock actor spawned, reported again on resync

	cancel   context.CancelFunc
	lastDesc string
	pending  *messages.Outcome // terminal report not yet acknowledged
}

// Receive implements actor.Actor.
func (j *jobActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		j.start(ctx)
		if j.spawnLock {
			j.startLock(ctx)
		}
	case *workerProgress:
		if j.pending == nil {
			j.lastDesc = m.description
			ctx.Send(j.registry, &jobProgress{id: j.id, description: m.description})
		}
	case *workerFinished:
		if j.pending == nil {
			out := m.outcome
			j.pending = &out
			ctx.Request(j.registry, &jobFinished{id: j.id, outcome: out})
		}
	case *finishAck:
		j.pending = nil
		ctx.Stop(ctx.Self())
	case *resync:
		j.registry = m.registry
		if j.lockPID != nil {
			ctx.Send(j.registry, &lockSpawned{key: j.lockKey(), pid: j.lockPID, jobID: j.id})
		}
		switch {
		case j.pending != nil:
			ctx.Request(j.registry, &jobFinished{id: j.id, outcome: *j.pending})
		case j.lastDesc != "":
			ctx.Send(j.registry, &jobProgress{id: j.id, description: j.lastDesc})
		}
	case *cancelWork:
		j.cancel()
	case *actor.Stopping:
		j.cancel()
		if j.pending != nil {
			// Sent before our Terminated, so the registry records it before
			// it considers the fallback seal.
			ctx.Send(j.registry, &jobFinished{id: j.id, outcome: *j.pending})
		}
	default:
		crashIfAsked(m)
	}
}

// startLock spawns the node lock actor holding this job and reports it.
func (j *jobActor) startLock(ctx actor.Context) {
	la := &nodeLockActor{key: j.lockKey(), registry: j.registry, holders: map[string]*actor.PID{j.id: ctx.Self()}}
	j.lockPID = j.core.spawner.SpawnPrefix(actor.PropsFromProducer(func() actor.Actor { return la }, actor.WithMailbox(newInlineMailbox)), "lock-")
	ctx.Send(j.registry, &lockSpawned{key: la.key, pid: j.lockPID, jobID: j.id})
}

func (j *jobActor) lockKey() nodeKey { return nodeKey{j.rack, j.node} }

func (j *jobActor) start(ctx actor.Context) {
	wctx, cancel := context.WithCancel(context.Background())
	j.cancel = cancel
	h := &handle{id: j.id, parentID: j.parentID, root: ctx.ActorSystem().Root, self: ctx.Self()}
	wf, plan, c := j.wf, j.cleanup, j.core
	j.wf, j.cleanup = nil, nil
	go runWorker(wctx, c, wf, h, plan)
}

// runWorker runs a workflow and guarantees a terminal report: a workflow
// that returns or panics without one yields the abandoned failure. The
// cleanup plan runs afterwards, whatever happened.
func runWorker(ctx context.Context, c *core, wf messages.Workflow, h *handle, plan *messages.CleanupPlan) {
	defer c.workers.Done()
	func() {
		defer func() {
			if p := recover(); p != nil {
				c.log.Warn().Str("job_id", h.id).Str("panic", fmt.Sprint(p)).Msg("job worker task exited unsuccessfully")
			}
		}()
		wf.Run(ctx, h)
	}()
	if h.sealIfOpen(abandonedFailure()) {
		c.log.Warn().Str("job_id", h.id).Msg(abandonedMessage)
	}
	if plan != nil {
		report := runCleanup(c, h.id, plan)
		if c.onCleanup != nil {
			c.onCleanup(report)
		}
	}
}
