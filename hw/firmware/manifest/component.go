package manifest

import (
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// hgxChassisTarget is the Redfish target of an HMC (HGX) package on a
// compute tray (southbound §3.5).
const hgxChassisTarget = "/redfish/v1/Chassis/HGX_Chassis_0"

// componentRule is what rmsd knows about a component label.
type componentRule struct {
	// name is the normalised name apply requests filter on; callers send
	// "BMC", "CPLD", "BIOS" for switches and "PowerShelfFW" for shelves.
	name string
	// targets is the firmware target passed to the node update API, by
	// node kind. A kind absent or "" lets the update path decide from the
	// package (compute: its file name; shelves: always cleared upstream).
	targets map[hw.Kind]string
}

// componentRules maps a normalised label (see normalise) to its rule.
var componentRules = map[string]componentRule{
	"bmcfpgaerot":  {"BMC", map[hw.Kind]string{hw.KindSwitch: "bmc", hw.KindCompute: "bmc"}},
	"bmcerot":      {"BMC", map[hw.Kind]string{hw.KindSwitch: "bmc", hw.KindCompute: "bmc"}},
	"bmc":          {"BMC", map[hw.Kind]string{hw.KindSwitch: "bmc", hw.KindCompute: "bmc"}},
	"sbioserot":    {"BIOS", map[hw.Kind]string{hw.KindSwitch: "bios"}},
	"sbios":        {"BIOS", map[hw.Kind]string{hw.KindSwitch: "bios"}},
	"bios":         {"BIOS", map[hw.Kind]string{hw.KindSwitch: "bios"}},
	"uefi":         {"BIOS", map[hw.Kind]string{hw.KindSwitch: "bios"}},
	"cpld":         {"CPLD", map[hw.Kind]string{hw.KindSwitch: "cpld"}},
	"fpga":         {"FPGA", map[hw.Kind]string{hw.KindSwitch: "fpga"}},
	"erot":         {"EROT", map[hw.Kind]string{hw.KindSwitch: "erot"}},
	"hmc":          {"HMC", map[hw.Kind]string{hw.KindCompute: hgxChassisTarget}},
	"powershelffw": {"PowerShelfFW", nil},
	"powershelf":   {"PowerShelfFW", nil},
	// In-band NICs, flashed with Flint over the host (opt-in at apply).
	"cx7":    {"CX7", map[hw.Kind]string{hw.KindCompute: "CX7"}},
	"cx8":    {"CX8", map[hw.Kind]string{hw.KindCompute: "CX8"}},
	"bf3nic": {"BF3_NIC", map[hw.Kind]string{hw.KindCompute: "BF3_NIC"}},
	"bf3bfb": {"BF3_BFB", map[hw.Kind]string{hw.KindCompute: "BF3_BFB"}},
}

// ruleOf returns the rule of a raw component label; an unknown label keeps
// its own (trimmed) spelling and has no target.
func ruleOf(label string) componentRule {
	if r, ok := componentRules[Normalise(label)]; ok {
		return r
	}
	return componentRule{name: strings.TrimSpace(label)}
}

// isPowerShelfComponent reports whether a label names power-shelf firmware,
// which goes to power shelves wherever the manifest lists it.
func isPowerShelfComponent(label string) bool { return ruleOf(label).name == "PowerShelfFW" }

// isNVOS reports whether a software entry is a switch system image.
func isNVOS(label string) bool { return Normalise(label) == "nvos" }
