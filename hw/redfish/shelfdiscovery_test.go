package redfish_test

import (
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

// TestAKeptClientDiscoversTheShelfChassisEveryRead: hw/nodeops keeps a
// node's client across operations, and a read through it sends what a
// read through a new client sends, the chassis collection included.
func TestAKeptClientDiscoversTheShelfChassisEveryRead(t *testing.T) {
	f := startFleet(t, sim.Layout{Shelves: 1, ShelfType: hw.PowerShelfGB200Liteon})
	dev := f.Devices()[0]
	pool := newPool(t, fastOptions())
	kept := clientFor(t, pool, dev.Endpoint())
	ctx := testCtx(t)
	requestsOf := func(c *redfish.Client) int {
		before := dev.Requests()
		if got, err := c.ShelfPowerState(ctx, redfish.ShelfLiteOn); err != nil || got != redfish.PowerOn {
			t.Fatalf("shelf power = %v, %v; want On", got, err)
		}
		return dev.Requests() - before
	}
	fresh := requestsOf(clientFor(t, pool, dev.Endpoint()))
	first, second := requestsOf(kept), requestsOf(kept)
	if first != fresh || second != fresh {
		t.Fatalf("a read sent %d requests through a new client, %d and then %d through a kept one", fresh, first, second)
	}
}
