package platform_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testNetwork = 102

func startFleet(t *testing.T, l sim.Layout, withHosts bool) *sim.Fleet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	f, err := sim.Start(ctx, sim.Options{Layout: l, TimeScale: 0.001, NoSwitchHosts: !withHosts, Network: testNetwork,
		Timing: sim.Timing{ComputeFlash: 50 * time.Second, ShelfFlash: 50 * time.Second, BMCReboot: 60 * time.Second,
			ShelfReboot: 60 * time.Second, PowerTransition: 20 * time.Second, ResetDelay: 5 * time.Second,
			HostReboot: 60 * time.Second}})
	if err != nil {
		t.Fatalf("start simulator: %v", err)
	}
	t.Cleanup(f.Close)
	return f
}

func deps(t *testing.T) platform.Deps {
	t.Helper()
	p := redfish.NewPool(redfish.Options{
		RequestTimeout: 5 * time.Second, TaskPollInterval: 5 * time.Millisecond, TaskTimeout: 10 * time.Second,
		LivenessInterval: 5 * time.Millisecond, LivenessTimeout: 10 * time.Second, ProbeTimeout: time.Second,
	})
	t.Cleanup(p.Close)
	nv, err := nvue.NewPool(nvue.Options{PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	return platform.Deps{Redfish: p, NVUE: nv,
		SSH: sshsftp.Options{HostKey: sshsftp.AcceptAnyHostKey(), ConnectTimeout: 5 * time.Second,
			StepTimeout: 5 * time.Second},
		SwitchReboot: platform.SwitchRebootTiming{ProbeInterval: 5 * time.Millisecond,
			InstallTimeout: 10 * time.Second, PowerCycleTimeout: 10 * time.Second}}
}

// fleetDeps are deps whose SSH reaches the NVOS hosts of f.
func fleetDeps(t *testing.T, f *sim.Fleet) platform.Deps {
	t.Helper()
	d := deps(t)
	d.SSH.Port = f.SSHPort()
	return d
}

func device(t *testing.T, d platform.Deps, n sim.Node) platform.Device {
	t.Helper()
	dev, err := platform.New(d, platform.Config{ID: n.ID, Type: n.Type, BMC: n.BMC, Host: n.Host})
	if err != nil {
		t.Fatalf("platform.New(%s): %v", n.ID, err)
	}
	t.Cleanup(dev.Close)
	return dev
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitTask polls a firmware task until it is terminal; the engine does the
// same on its own cadence.
func waitTask(t *testing.T, dev platform.Device, id string) platform.TaskStatus {
	t.Helper()
	ctx := testCtx(t)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := dev.FirmwareTask(ctx, id)
		if err != nil {
			t.Fatalf("task %s: %v", id, err)
		}
		if st.Done {
			return st
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s never finished: %+v", id, st)
		case <-tick.C:
		}
	}
}
