package actors

import (
	"github.com/asynkron/protoactor-go/actor"
)

// nodeLockActor represents the lock on one (rack, node) while non-terminal
// jobs target it. The lock itself is recorded in the registry's store (so no
// actor death can lose it); this actor is its watchdog: it watches the job
// actors holding the node and tells the registry when one of them is gone,
// so a node never stays locked without a live job.
type nodeLockActor struct {
	key      nodeKey
	registry *actor.PID
	holders  map[string]*actor.PID
}

// Receive implements actor.Actor.
func (l *nodeLockActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		for _, pid := range l.holders {
			ctx.Watch(pid)
		}
	case *lockAcquire:
		l.holders[m.jobID] = m.pid
		ctx.Watch(m.pid)
	case *resync:
		l.registry = m.registry
	case *lockRelease:
		if pid, ok := l.holders[m.jobID]; ok {
			delete(l.holders, m.jobID)
			ctx.Unwatch(pid)
		}
	case *actor.Terminated:
		for id, pid := range l.holders {
			if pid.Id == m.Who.Id {
				delete(l.holders, id)
				ctx.Send(l.registry, &lockHolderGone{jobID: id})
			}
		}
	default:
		crashIfAsked(m)
	}
}
