package actorsystem

import (
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/test/leakcheck"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakcheck.ProtoactorThrottle)
}

// TestNewSystemHoldsACompactRegistry: a new system's registry is 1,024
// single-shard maps, a few hundred KiB, not protoactor's default of 32
// shards each (about 2.7 MiB, live for as long as the daemon runs).
func TestNewSystemHoldsACompactRegistry(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sys := New(quiet)
	runtime.ReadMemStats(&after)
	defer sys.Shutdown()

	buckets := sys.ProcessRegistry.LocalPIDs.LocalPIDs
	if len(buckets) == 0 {
		t.Fatal("the registry has no buckets")
	}
	for i, b := range buckets {
		if len(b) != registryShards {
			t.Fatalf("bucket %d has %d shards, want %d", i, len(b), registryShards)
		}
	}
	const most = 512 << 10
	if got := after.TotalAlloc - before.TotalAlloc; got > most {
		t.Fatalf("a new actor system allocated %d KiB, want at most %d KiB", got>>10, most>>10)
	}
}

// quiet keeps protoactor's own log lines out of the test output.
var quiet = actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
})

// echo answers a string request with its own name.
type echo struct{ name string }

func (e *echo) Receive(c actor.Context) {
	if _, ok := c.Message().(string); ok {
		c.Respond(e.name)
	}
}

// TestRegistryFindsEveryActorAndForgetsItWhenStopped: with one shard per
// bucket, thousands of named actors are each reached by their PID, and
// once stopped none is left in the registry.
func TestRegistryFindsEveryActorAndForgetsItWhenStopped(t *testing.T) {
	sys := New(quiet)
	defer sys.Shutdown()
	own := registered(sys) // the system's own processes
	const actors = 4096
	pids := make([]*actor.PID, actors)
	for i := range pids {
		name := fmt.Sprintf("echo-%d", i)
		pid, err := sys.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return &echo{name: name} }), name)
		if err != nil {
			t.Fatalf("spawn %s: %v", name, err)
		}
		pids[i] = pid
	}
	if got := registered(sys) - own; got != actors {
		t.Fatalf("the registry holds %d actors besides the system's own, want %d", got, actors)
	}
	for i, pid := range pids {
		reply, err := sys.Root.RequestFuture(pid, "name?", 10*time.Second).Result()
		if err != nil {
			t.Fatalf("request echo-%d: %v", i, err)
		}
		if want := fmt.Sprintf("echo-%d", i); reply != want {
			t.Fatalf("echo-%d answered %v", i, reply)
		}
	}
	for _, pid := range pids {
		if err := sys.Root.StopFuture(pid).Wait(); err != nil {
			t.Fatalf("stop %s: %v", pid.Id, err)
		}
	}
	if got := registered(sys) - own; got != 0 {
		t.Fatalf("the registry holds %d actors besides the system's own after every one stopped, want 0", got)
	}
}

// registered counts the local actors in sys's registry.
func registered(sys *actor.ActorSystem) int {
	n := 0
	for _, b := range sys.ProcessRegistry.LocalPIDs.LocalPIDs {
		n += b.Count()
	}
	return n
}
