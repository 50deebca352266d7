package platform_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/sim"
)

func TestTable_EveryNodeTypeHasAnEntry(t *testing.T) {
	for _, typ := range hw.AllNodeTypes() {
		e, ok := platform.Lookup(typ)
		if !ok {
			t.Errorf("node type %s has no platform entry", typ)
			continue
		}
		if e.Type != typ || len(e.Capabilities) == 0 || e.New == nil {
			t.Errorf("entry for %s is incomplete: %+v", typ, e)
		}
		if !slices.Contains(e.Capabilities, platform.CapPower) {
			t.Errorf("%s cannot do power", typ)
		}
	}
	if _, ok := platform.Lookup(hw.NodeTypeUnspecified); ok {
		t.Error("UNSPECIFIED has an entry")
	}
	_, err := platform.New(deps(t), platform.Config{ID: "x", Type: hw.NodeTypeUnspecified})
	if !errors.Is(err, hw.ErrUnsupported) {
		t.Errorf("New(UNSPECIFIED) err = %v, want ErrUnsupported", err)
	}
}

// layoutFor builds a one-node rack of the given type.
func layoutFor(typ hw.NodeType) sim.Layout {
	switch typ.Kind() {
	case hw.KindCompute:
		return sim.Layout{Compute: 1, ComputeType: typ}
	case hw.KindSwitch:
		return sim.Layout{Switches: 1, SwitchType: typ}
	default:
		return sim.Layout{Shelves: 1, ShelfType: typ}
	}
}

// call runs one operation of a capability with harmless arguments.
func call(t *testing.T, dev platform.Device, c platform.Capability) error {
	ctx := testCtx(t)
	switch c {
	case platform.CapPower:
		_, err := dev.PowerState(ctx)
		return err
	case platform.CapDeviceInfo:
		_, err := dev.DeviceInfo(ctx)
		return err
	case platform.CapFirmwareInventory:
		_, err := dev.FirmwareInventory(ctx)
		return err
	case platform.CapFirmwareUpdate:
		body := sim.FirmwareMagic + "T1\n"
		st, err := dev.StartFirmwareUpdate(ctx, platform.FirmwareUpdate{Component: "bmc", FileName: "t.bin",
			Body: strings.NewReader(body), Size: int64(len(body))})
		if err == nil {
			_, err = dev.FirmwareTask(ctx, st.TaskID)
		}
		return err
	case platform.CapAuxPowerCycle:
		return dev.AuxPowerCycle(ctx)
	default:
		return fmt.Errorf("unknown capability %s", c)
	}
}

func TestTable_CapabilitiesWorkAndTheRestIsUnsupported(t *testing.T) {
	for _, typ := range hw.AllNodeTypes() {
		t.Run(typ.Name(), func(t *testing.T) {
			e, _ := platform.Lookup(typ)
			f := startFleet(t, layoutFor(typ), typ.Kind() == hw.KindSwitch)
			dev := device(t, fleetDeps(t, f), f.Nodes()[0])
			if got := dev.Capabilities(); !slices.Equal(got, e.Capabilities) {
				t.Fatalf("device capabilities %v, table %v", got, e.Capabilities)
			}
			for _, c := range platform.AllCapabilities() {
				err := call(t, dev, c)
				if slices.Contains(e.Capabilities, c) {
					if err != nil {
						t.Errorf("%s: supported capability %s failed: %v", typ, c, err)
					}
				} else if !errors.Is(err, hw.ErrUnsupported) {
					t.Errorf("%s: unsupported capability %s returned %v, want ErrUnsupported", typ, c, err)
				}
			}
		})
	}
}

func TestSupportsFollowsTheTable(t *testing.T) {
	if !platform.Supports(hw.ComputeGB200Nvidia, platform.CapDeviceInfo) || !platform.Supports(hw.SwitchGB300Nvidia, platform.CapDeviceInfo) {
		t.Fatal("compute trays and switches have device info")
	}
	if platform.Supports(hw.PowerShelfGB200Delta, platform.CapDeviceInfo) || platform.Supports(hw.NodeType(77), platform.CapPower) {
		t.Fatal("shelves have no device info; an unknown type has nothing")
	}
}
