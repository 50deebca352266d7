package redfish_test

import (
	"encoding/json"
	"errors"
	"strconv"
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
	if topo.ChassisSerialNumber == "" || show(topo.TraySlotNumber) != "14" || show(topo.TraySlotIndex) != "11" {
		t.Fatalf("topology = %+v", topo)
	}
	other, err := clientFor(t, p, f.Devices()[0].Endpoint()).MNNVLinkTopology(ctx)
	if err != nil || other.ChassisSerialNumber != topo.ChassisSerialNumber || show(other.TraySlotNumber) != "1" {
		t.Fatalf("tray 1 topology = %+v, %v", other, err)
	}
	// Switch BMCs have no processors: no topology.
	_, err = clientFor(t, p, f.Devices()[12].Endpoint()).MNNVLinkTopology(ctx)
	if !errors.Is(err, redfish.ErrNotFound) {
		t.Fatalf("switch bmc: err = %v, want ErrNotFound", err)
	}
}

// show prints an optional number, "unset" for nil.
func show(v *int64) string {
	if v == nil {
		return "unset"
	}
	return strconv.FormatInt(*v, 10)
}

// Placement is optional: whatever the BMC puts in a topology key, the
// client reads the tray's topology without error; what is not an integer
// (or is missing) is unset, integers are reported as they are (range checks
// belong to the gRPC edge).
func TestMNNVLinkTopology_ValuesAsTheBMCSendsThem(t *testing.T) {
	f := startFleet(t, sim.Layout{Compute: 1})
	d := f.Devices()[0]
	c := clientFor(t, newPool(t, fastOptions()), d.Endpoint())
	tests := []struct {
		give       string // raw JSON; "" leaves the key out
		wantNumber string
		wantSerial string
	}{
		{give: "", wantNumber: "unset", wantSerial: ""},
		{give: "null", wantNumber: "unset", wantSerial: ""},
		{give: `""`, wantNumber: "unset", wantSerial: ""},
		{give: `"  "`, wantNumber: "unset", wantSerial: ""},
		{give: `"slot-four"`, wantNumber: "unset", wantSerial: "slot-four"},
		{give: "3.5", wantNumber: "unset", wantSerial: "3.5"},
		{give: "{}", wantNumber: "unset", wantSerial: ""},
		{give: "1e30", wantNumber: "unset", wantSerial: "1e30"},
		{give: `"99999999999999999999"`, wantNumber: "unset", wantSerial: "99999999999999999999"},
		{give: "0", wantNumber: "0", wantSerial: "0"},
		{give: `"7"`, wantNumber: "7", wantSerial: "7"},
		{give: "-3", wantNumber: "-3", wantSerial: "-3"},
		{give: "4294967296", wantNumber: "4294967296", wantSerial: "4294967296"},
	}
	for _, tt := range tests {
		for _, key := range []string{"ChassisSerialNumber", "TraySlotNumber", "TraySlotIndex"} {
			d.SetTopology(key, json.RawMessage(tt.give))
		}
		topo, err := c.MNNVLinkTopology(testCtx(t))
		if err != nil {
			t.Fatalf("%s: %v", tt.give, err)
		}
		if got := show(topo.TraySlotNumber); got != tt.wantNumber {
			t.Errorf("TraySlotNumber %s: got %s, want %s", tt.give, got, tt.wantNumber)
		}
		if got := show(topo.TraySlotIndex); got != tt.wantNumber {
			t.Errorf("TraySlotIndex %s: got %s, want %s", tt.give, got, tt.wantNumber)
		}
		if topo.ChassisSerialNumber != tt.wantSerial {
			t.Errorf("ChassisSerialNumber %s: got %q, want %q", tt.give, topo.ChassisSerialNumber, tt.wantSerial)
		}
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
