package actorsystem

import (
	"github.com/asynkron/protoactor-go/actor"
	cmap "github.com/orcaman/concurrent-map"
)

// registryShards is the shard count of each of the registry's 1,024
// bucket maps (see the package comment).
const registryShards = 1

func init() { cmap.SHARD_COUNT = registryShards }

// New returns a new actor system with opts and the compact process
// registry this package sets up.
func New(opts ...actor.ConfigOption) *actor.ActorSystem {
	return actor.NewActorSystem(opts...)
}
