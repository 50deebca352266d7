package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// keeper supervises the registry: a panic restarts it (same PID, same
// injected store), and if it is stopped the keeper spawns a new one, which
// rebuilds its links from the store. The keeper publishes each registry PID
// for the facade only after the spawn has completed. It has no other work,
// so it cannot fail.
type keeper struct {
	props    *actor.Props
	core     *core
	ready    chan struct{} // closed once the first registry exists
	stopping bool
}

// Receive implements actor.Actor.
func (k *keeper) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		k.spawn(ctx)
		close(k.ready)
	case *actor.Stopping:
		k.stopping = true
	case *actor.Terminated:
		if !k.stopping {
			k.spawn(ctx)
		}
	}
}

func (k *keeper) spawn(ctx actor.Context) {
	k.core.registry.Store(ctx.SpawnPrefix(k.props, "registry-"))
}

// registryRestarts allows many restarts: every one of them keeps the state.
func registryRestarts() actor.SupervisorStrategy {
	return actor.NewOneForOneStrategy(1000, time.Second, func(any) actor.Directive { return actor.RestartDirective })
}
