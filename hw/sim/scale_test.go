package sim_test

import (
	"runtime"
	"testing"

	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

// TestFleet_ThousandDevicesInOneProcess starts 29 NVL72 racks (1,015 BMCs)
// and checks they cost about one goroutine each (their accept loop) and
// all answer.
func TestFleet_ThousandDevicesInOneProcess(t *testing.T) {
	before := runtime.NumGoroutine()
	f := start(t, sim.Options{Racks: 29, NoSwitchHosts: true, Network: testNetwork + 1})
	nodes := f.Nodes()
	if len(nodes) != 29*35 {
		t.Fatalf("%d nodes, want %d", len(nodes), 29*35)
	}
	if g := runtime.NumGoroutine() - before; g > len(nodes)+50 {
		t.Fatalf("%d goroutines for %d idle devices: something polls per device", g, len(nodes))
	}
	ctx := testCtx(t)
	p := redfish.NewPool(redfish.Options{})
	defer p.Close()
	for i := 0; i < len(nodes); i += 97 { // a spread sample across racks
		c, err := p.Client(nodes[i].BMC)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ServiceRoot(ctx); err != nil {
			t.Fatalf("%s: %v", nodes[i].ID, err)
		}
	}
}
