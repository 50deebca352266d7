package sim_test

import (
	"slices"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

// A mutating request sent through the real Redfish client under a holder
// reaches the fleet's record under the device's node id; reads and
// holders one after another count no overlap, a holder acting between two
// requests of another counts one.
func TestOverlaps_RedfishRequestsAreRecordedByHolder(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true})
	n := f.Nodes()[0]
	c := client(t, n.BMC)
	as := func(holder string) {
		t.Helper()
		ctx := hw.WithHolder(testCtx(t), holder)
		if _, err := c.SystemPowerState(ctx); err != nil { // a read: not recorded
			t.Fatal(err)
		}
		if err := c.ResetSystem(ctx, redfish.ResetForceOn); err != nil {
			t.Fatal(err)
		}
	}
	as("job-a")
	as("job-a")
	as("lease-b")
	if got := f.Overlaps(); got != 0 {
		t.Fatalf("Overlaps = %d after holders one after another, want 0", got)
	}
	holders := f.OverlapRecorder().Holders(n.ID)
	slices.Sort(holders)
	if !slices.Equal(holders, []string{"job-a", "lease-b"}) {
		t.Fatalf("holders recorded on %s = %v, want [job-a lease-b]", n.ID, holders)
	}
	as("job-a") // job-a's span now encloses lease-b's request
	if got := f.Overlaps(); got != 1 {
		t.Fatalf("Overlaps = %d, want 1", got)
	}
	if got := f.UnattributedRequests(); got != 0 {
		t.Fatalf("UnattributedRequests = %d, want 0", got)
	}
}

// A switch tray is one device: its NVOS host's mutating NVUE requests are
// recorded under the same node id as its BMC's.
func TestOverlaps_NVUERequestsCountOnTheSwitchTray(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Switches: 1}})
	var n sim.Node
	for _, x := range f.Nodes() {
		if x.Switch != nil {
			n = x
		}
	}
	pool, err := nvue.NewPool(nvue.Options{TLS: nvue.TLSVerify, RootCAs: f.CertPool(), RequestTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	sw, err := pool.Client(n.Host)
	if err != nil {
		t.Fatal(err)
	}
	if err := client(t, n.BMC).ResetSystem(hw.WithHolder(testCtx(t), "job-a"), redfish.ResetForceOn); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.PowerCycle(hw.WithHolder(testCtx(t), "lease-b")); err != nil {
		t.Fatal(err)
	}
	holders := f.OverlapRecorder().Holders(n.ID)
	slices.Sort(holders)
	if !slices.Equal(holders, []string{"job-a", "lease-b"}) {
		t.Fatalf("holders recorded on %s = %v, want [job-a lease-b]", n.ID, holders)
	}
	if got := f.Overlaps(); got != 0 {
		t.Fatalf("Overlaps = %d, want 0", got)
	}
}

// A mutating request that names no holder is counted as unattributed.
func TestOverlaps_RequestWithoutHolderIsUnattributed(t *testing.T) {
	f := start(t, sim.Options{Layout: sim.Layout{Compute: 1}, NoSwitchHosts: true})
	if err := client(t, f.Nodes()[0].BMC).ResetSystem(testCtx(t), redfish.ResetForceOn); err != nil {
		t.Fatal(err)
	}
	if got := f.UnattributedRequests(); got != 1 {
		t.Fatalf("UnattributedRequests = %d, want 1", got)
	}
}
