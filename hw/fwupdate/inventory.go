package fwupdate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rmsd/rmsd/hw/firmware/compare"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/platform"
)

// A target's inventory entry is the one hw/firmware/compare.Find chooses
// for it, the rule CompareFirmwareObject answers with: the entry whose ID
// or URI is the target, else the one that holds the component by name
// (compute "BMC" is FW_BMC_0, not the HMC's HGX_FW_BMC_0 nor the BMC's
// ERoT). So "already up to date" here and MATCHED in a comparison are the
// same judgement. A target no entry holds has none: it is never skipped
// and its post-activation check names no installed version.
func entriesFor(t Target, inv []platform.Firmware) []platform.Firmware {
	c := manifest.Component{Name: t.Component}
	if t.Target != "" {
		c.Artifacts = []manifest.ComponentArtifact{{Target: t.Target}}
	}
	if e, ok := compare.Find(c, inv); ok {
		return []platform.Firmware{e}
	}
	return nil
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
