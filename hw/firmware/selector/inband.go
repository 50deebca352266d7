package selector

import (
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// ErrInBandNIC marks an in-band NIC component rmsd cannot flash on a node.
var ErrInBandNIC = errors.New("in-band NIC firmware")

// flintTypes are the node types whose CX7, CX8 and BF3_NIC firmware is
// flashed with Flint over the host OS (upstream:
// supports_flint_inband_firmware, the NVIDIA and Wiwynn GB200 trays).
var flintTypes = map[hw.NodeType]bool{hw.ComputeGB200Nvidia: true, hw.ComputeGB200Wiwynn: true}

// CheckInBand says why in-band NIC component name cannot be flashed on a
// node of type t: nil for a component that is not in-band, or a Flint
// family on a GB200 compute tray. BF3_BFB (a BlueField OS bundle, which
// goes through the DPU's rshim with bfb-install, not Flint) is flashed by
// neither upstream nor rmsd.
func CheckInBand(name string, t hw.NodeType) error {
	if !IsInBandNIC(name) {
		return nil
	}
	if manifest.Normalise(name) == "bf3bfb" {
		return fmt.Errorf("component %s: %w: a BlueField-3 BFB bundle is installed through the DPU's rshim (bfb-install), not with Flint, and RMS has no such path; leave BF3_BFB out of the filters", name, ErrInBandNIC)
	}
	if !flintTypes[t] {
		return fmt.Errorf("component %s: %w is flashed with Flint over the host only on GB200 compute nodes (compute_gb200_nvidia, compute_gb200_wiwynn), not on %s", name, ErrInBandNIC, t.Name())
	}
	return nil
}
