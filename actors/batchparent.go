package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// batchActor is the BatchParent actor of one open parent. It collects its
// children's terminal snapshots and, once every child is terminal or gone,
// computes the parent's outcome and hands it to the registry. The registry
// respawns it with the current child states if it dies early.
type batchActor struct {
	registry *actor.PID
	parent   messages.JobSnapshot
	done     map[string]messages.JobSnapshot
	missing  map[string]struct{}
	settled  bool
}

// Receive implements actor.Actor.
func (b *batchActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		b.trySettle(ctx)
	case *resync:
		// The previous registry may have lost our verdict: offer it again.
		b.registry = m.registry
		b.settled = false
		b.trySettle(ctx)
	case *childAdded:
		b.parent.ChildIDs = append(b.parent.ChildIDs, m.id)
	case *childFinished:
		b.done[m.snap.ID] = m.snap
		b.trySettle(ctx)
	default:
		crashIfAsked(m)
	}
}

func (b *batchActor) trySettle(ctx actor.Context) {
	if b.settled {
		return
	}
	pending := messages.JobSnapshot{State: messages.StateQueued}
	view, ok := aggregateBatch(&b.parent, func(id string) (*messages.JobSnapshot, bool) {
		if _, gone := b.missing[id]; gone {
			return nil, false
		}
		if s, ok := b.done[id]; ok {
			return &s, true
		}
		return &pending, true
	})
	if !ok || view.outcome == nil {
		return
	}
	b.settled = true
	ctx.Send(b.registry, &parentSettled{id: b.parent.ID, outcome: *view.outcome})
}
