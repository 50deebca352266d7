package sim_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testNetwork keeps this package's devices apart from other packages'.
const testNetwork = 103

func fastTiming() sim.Timing {
	return sim.Timing{
		ComputeFlash: 60 * time.Second, ShelfFlash: 60 * time.Second, BMCReboot: 150 * time.Second,
		ShelfReboot: 150 * time.Second, PowerTransition: 20 * time.Second, ResetDelay: 5 * time.Second,
		HostReboot: 300 * time.Second,
	}
}

func start(t *testing.T, o sim.Options) *sim.Fleet {
	t.Helper()
	if o.Network == 0 {
		o.Network = testNetwork
	}
	if o.TimeScale == 0 {
		o.TimeScale = 0.001
	}
	if o.Timing == (sim.Timing{}) {
		o.Timing = fastTiming()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f, err := sim.Start(ctx, o)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func client(t *testing.T, ep hw.Endpoint) *redfish.Client {
	t.Helper()
	p := redfish.NewPool(redfish.Options{
		RequestTimeout: 5 * time.Second, TaskPollInterval: 5 * time.Millisecond, TaskTimeout: 20 * time.Second,
		LivenessInterval: 5 * time.Millisecond, LivenessTimeout: 20 * time.Second, ProbeTimeout: time.Second,
	})
	t.Cleanup(p.Close)
	c, err := p.Client(ep)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
