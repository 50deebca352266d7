package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// leaseGrant is the immutable description of a lease a NodeLock actor
// serves: what is held, by whom, since when and until when (operations).
type leaseGrant struct {
	key       lockKey
	holder    string
	operation string
	since     time.Time
	expires   time.Time
}

// nodeLockActor serves one lease of a (rack, node) or a rack. The registry
// decides who may hold what and records it; this actor is the lease's live
// side: it watches the actor the holder lives in and tells the registry
// when it is gone, so a node never stays held by a job whose actor died,
// and it ends an operation's lease when its TTL lapses, so a caller that
// vanished cannot hold a node for ever. The registry stops it when the
// lease is released, and spawns a new one from the same grant if it dies.
type nodeLockActor struct {
	registry *actor.PID
	grant    leaseGrant
	watch    *actor.PID // the holder's actor; nil for operations
	now      func() time.Time
	timer    *time.Timer
}

// leaseTimeout is the lock actor's own timer firing.
type leaseTimeout struct{}

// Receive implements actor.Actor.
func (l *nodeLockActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		if l.watch != nil {
			ctx.Watch(l.watch)
		}
		if !l.grant.expires.IsZero() {
			self, root := ctx.Self(), ctx.ActorSystem().Root
			l.timer = time.AfterFunc(max(l.grant.expires.Sub(l.now()), 0), func() { root.Send(self, &leaseTimeout{}) })
		}
	case *leaseTimeout:
		ctx.Send(l.registry, &leaseExpired{key: l.grant.key, holder: l.grant.holder})
	case *actor.Terminated:
		if l.watch != nil && m.Who.Id == l.watch.Id {
			ctx.Send(l.registry, &lockHolderGone{key: l.grant.key, holder: l.grant.holder})
		}
	case *resync:
		l.registry = m.registry
	case *actor.Stopping:
		if l.timer != nil {
			l.timer.Stop()
		}
		if l.watch != nil {
			ctx.Unwatch(l.watch) // no Terminated to a dead letter later
		}
	default:
		crashIfAsked(m)
	}
}
