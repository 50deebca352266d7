package selector

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/fwupdate"
)

// Targets turns the selected components of node type t into update
// targets whose files lie in dir (the object's cache). Components with no
// package of the channel are dropped; a selection left empty is a
// *NoComponentsError. Supermicro GB300 trays get their fixed order.
func Targets(objectID string, md manifest.Metadata, t hw.NodeType, f Filters, channel, dir string) ([]fwupdate.Target, error) {
	comps, ok := Components(md, t, f, channel)
	if !ok {
		return nil, nil
	}
	var out []fwupdate.Target
	for _, c := range comps {
		if err := CheckInBand(c.Name, t); err != nil && len(c.Artifacts) > 0 {
			return nil, err
		}
		for _, a := range c.Artifacts {
			out = append(out, fwupdate.Target{Component: c.Name, Target: a.Target, File: filepath.Join(dir, a.FileName), Version: ExpectedVersion(c)})
		}
	}
	if len(out) == 0 {
		return nil, &NoComponentsError{ObjectID: objectID, Type: t, Channel: Channel(channel), Filtered: !f.IsZero()}
	}
	if t == hw.ComputeGB300Supermicro {
		return supermicroOrder(out)
	}
	return out, nil
}

// ExpectedVersion is the version a node reports for component c once its
// package is active: the version of the subcomponent named like c itself
// (a "BMC+FPGA+EROT" entry's "BMC"), else c's own version when it has no
// subcomponents. A bundle whose subcomponents are other devices (a power
// shelf's "PR1 PSU" and "PR1 PMC") has no single version to expect: "".
func ExpectedVersion(c manifest.Component) string {
	if len(c.Subcomponents) == 0 {
		return c.Version
	}
	for _, s := range c.Subcomponents {
		if manifest.Normalise(s.Name) == manifest.Normalise(c.Name) {
			return s.Version
		}
	}
	return ""
}

// supermicroStage ranks a Supermicro GB300 package by file name: the HMC
// nosbios package, then BIOS, then the host BMC; -1 for anything else.
func supermicroStage(file string) int {
	base := strings.ToLower(filepath.Base(file))
	switch {
	case strings.Contains(base, "nosbios") && strings.HasSuffix(base, ".fwpkg"):
		return 0
	case strings.HasPrefix(base, "bios") && strings.HasSuffix(base, ".bin"):
		return 1
	case strings.Contains(base, "obmc") && strings.HasSuffix(base, ".bin"):
		return 2
	}
	return -1
}

// supermicroOrder puts a Supermicro GB300 tray's packages in stage order
// and marks the activations after nosbios and BIOS. A package that is none
// of the three has no place in that sequence and is refused.
func supermicroOrder(ts []fwupdate.Target) ([]fwupdate.Target, error) {
	var staged [3][]fwupdate.Target
	for _, t := range ts {
		s := supermicroStage(t.File)
		if s < 0 {
			return nil, fmt.Errorf("supermicro GB300 compute takes *nosbios*.fwpkg, BIOS*.bin and *OBMC*.bin packages only, not %s", filepath.Base(t.File))
		}
		t.ActivateAfter = s < 2
		staged[s] = append(staged[s], t)
	}
	var out []fwupdate.Target
	for _, s := range staged {
		out = append(out, s...)
	}
	return out, nil
}

// CheckSupermicroActivation refuses a Supermicro GB300 update that flashes
// both the nosbios and the BIOS package without activation: the BIOS must
// not be flashed over an HMC image that is not active yet.
func CheckSupermicroActivation(t hw.NodeType, targets []fwupdate.Target, activate bool) error {
	if t != hw.ComputeGB300Supermicro || activate {
		return nil
	}
	var nosbios, bios bool
	for _, tg := range targets {
		switch supermicroStage(tg.File) {
		case 0:
			nosbios = true
		case 1:
			bios = true
		}
	}
	if nosbios && bios {
		return fmt.Errorf("supermicro GB300: the nosbios and BIOS packages together need activation (activate=true)")
	}
	return nil
}
