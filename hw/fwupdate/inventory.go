package fwupdate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rmsd/rmsd/hw/platform"
)

// A target's inventory entries are the firmware components of the node
// that stand for it, chosen by the first rule that applies:
//
//  1. identity: when Target.Target is set, the entries whose ID or URI
//     equals it (case-insensitive), if there are any;
//  2. type: when platform.ClassifyFirmware of Target.Component gives a
//     known type, the entries of that type (possibly none);
//  3. otherwise (a component no rule classifies, such as a power shelf's
//     "PowerShelfFW"), every entry of the node.
//
// A target reports a version when any of its entries runs it
// (case-insensitive). "Any" rather than "all" because one package often
// covers only some entries of a type (a BMC package does not change the
// BMC's ERoT, yet both classify as BMC).
func entriesFor(t Target, inv []platform.Firmware) []platform.Firmware {
	if t.Target != "" {
		var same []platform.Firmware
		for _, e := range inv {
			if strings.EqualFold(e.ID, t.Target) || (e.URI != "" && strings.EqualFold(e.URI, t.Target)) {
				same = append(same, e)
			}
		}
		if len(same) > 0 {
			return same
		}
	}
	kind := platform.ClassifyFirmware(t.Component)
	if kind == platform.FirmwareUnknown {
		return inv
	}
	var typed []platform.Firmware
	for _, e := range inv {
		if e.Type == kind {
			typed = append(typed, e)
		}
	}
	return typed
}

// runs reports whether one of entries runs version.
func runs(entries []platform.Firmware, version string) bool {
	for _, e := range entries {
		if strings.EqualFold(e.Version, version) {
			return true
		}
	}
	return false
}

// installed describes what entries run, e.g. "FW_BMC_0=1.2, FW_ERoT_BMC_0=3.4",
// or "no matching inventory entry".
func installed(entries []platform.Firmware) string {
	if len(entries) == 0 {
		return "no matching inventory entry"
	}
	parts := make([]string, len(entries))
	for i, e := range entries {
		parts[i] = e.ID + "=" + e.Version
	}
	return strings.Join(parts, ", ")
}

// errInventoryMismatch marks a node whose inventory lacks expected APs.
var errInventoryMismatch = errors.New("expected firmware inventory mismatch")

// checkAPs requires every expected AP (an inventory id, case-insensitive)
// in inv.
func checkAPs(expected []string, inv []platform.Firmware) error {
	present := make([]string, 0, len(inv))
	have := make(map[string]bool, len(inv))
	for _, e := range inv {
		present = append(present, e.ID)
		have[strings.ToLower(e.ID)] = true
	}
	var missing []string
	for _, ap := range expected {
		if !have[strings.ToLower(ap)] {
			missing = append(missing, ap)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(present)
	return fmt.Errorf("%w: missing %s; present %s", errInventoryMismatch,
		strings.Join(missing, ", "), strings.Join(present, ", "))
}

// inventory reads the node's firmware inventory in one node operation.
func (r *run) inventory(ctx context.Context) ([]platform.Firmware, error) {
	var inv []platform.Firmware
	err := r.deps.Nodes.One(ctx, r.plan.Node, func(ctx context.Context, _ int, d platform.Device) (err error) {
		inv, err = d.FirmwareInventory(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read firmware inventory: %w", err)
	}
	return inv, nil
}
