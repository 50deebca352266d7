package redfish_test

import (
	"errors"
	"testing"

	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

func TestMNNVLinkTopology(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 12, Switches: 2})
	p := newPool(t, fastOptions())
	ctx := testCtx(t)
	// Tray 12 sits above the switch trays: slot 12 + 2 switches = 14.
	d := f.Devices()[11]
	topo, err := clientFor(t, p, d.Endpoint()).MNNVLinkTopology(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topo.ChassisSerialNumber == "" || topo.TraySlotNumber != 14 || topo.TraySlotIndex != 11 {
		t.Fatalf("topology = %+v", topo)
	}
	other, err := clientFor(t, p, f.Devices()[0].Endpoint()).MNNVLinkTopology(ctx)
	if err != nil || other.ChassisSerialNumber != topo.ChassisSerialNumber || other.TraySlotNumber != 1 {
		t.Fatalf("tray 1 topology = %+v, %v", other, err)
	}
	// Switch BMCs have no processors: no topology.
	_, err = clientFor(t, p, f.Devices()[12].Endpoint()).MNNVLinkTopology(ctx)
	if !errors.Is(err, redfish.ErrNotFound) {
		t.Fatalf("switch bmc: err = %v, want ErrNotFound", err)
	}
}

func TestFirmwareInventory(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 1, Shelves: 1})
	p := newPool(t, fastOptions())
	ctx := testCtx(t)
	inv, err := clientFor(t, p, f.Devices()[0].Endpoint()).FirmwareInventory(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Components) != len(f.Devices()[0].Components()) || inv.Failed != 0 {
		t.Fatalf("compute inventory = %+v", inv)
	}
	for _, comp := range inv.Components {
		installed, _, err := f.Devices()[0].Firmware(comp.ID)
		if err != nil || comp.Version != installed || comp.URI != redfish.FirmwareInventoryPath+"/"+comp.ID {
			t.Fatalf("component %+v vs device %q, %v", comp, installed, err)
		}
	}
	shelf, err := clientFor(t, p, f.Devices()[1].Endpoint()).FirmwareInventory(ctx)
	if err != nil || shelf.Components[0].ID != "FW_PMC_0" || shelf.Components[0].Name != "PMC firmware" {
		t.Fatalf("shelf inventory = %+v, %v", shelf, err)
	}
}
