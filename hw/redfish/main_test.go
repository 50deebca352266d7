package redfish_test

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

// testNetwork keeps this package's simulated devices apart from other
// packages' tests running at the same time.
const testNetwork = 101

// fastTiming makes simulated operations take tens of milliseconds.
func fastTiming() sim.Timing {
	return sim.Timing{
		ComputeFlash: 60 * time.Second, ShelfFlash: 60 * time.Second, BMCReboot: 150 * time.Second,
		ShelfReboot: 150 * time.Second, PowerTransition: 20 * time.Second, ResetDelay: 5 * time.Second,
		HostReboot: 50 * time.Second,
	}
}

// startFleet starts one rack with the given layout at 1/1000 speed.
func startFleet(t *testing.T, l sim.Layout) *sim.Fleet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, err := sim.Start(ctx, sim.Options{Layout: l, TimeScale: 0.001, Timing: fastTiming(),
		NoSwitchHosts: true, Network: testNetwork})
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

// fastOptions poll quickly so tests finish in milliseconds.
func fastOptions() redfish.Options {
	return redfish.Options{
		RequestTimeout: 5 * time.Second, TaskPollInterval: 5 * time.Millisecond, TaskTimeout: 10 * time.Second,
		TaskReadTolerance: 2 * time.Second, LivenessInterval: 5 * time.Millisecond, LivenessTimeout: 10 * time.Second,
		ProbeTimeout: time.Second,
	}
}

func newPool(t *testing.T, o redfish.Options) *redfish.Pool {
	t.Helper()
	p := redfish.NewPool(o)
	t.Cleanup(p.Close)
	return p
}

func clientFor(t *testing.T, p *redfish.Pool, ep hw.Endpoint) *redfish.Client {
	t.Helper()
	c, err := p.Client(ep)
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	return c
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func oneCompute() sim.Layout { return sim.Layout{Compute: 1} }
