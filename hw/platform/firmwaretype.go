package platform

import "strings"

// FirmwareType is the kind of a firmware component, as upstream RMS
// classifies it for firmware inventory replies.
type FirmwareType int

// The firmware types. Unknown is anything no rule matches (power shelf
// PMC and PSU firmware, a switch's EROT).
const (
	FirmwareUnknown FirmwareType = iota
	FirmwareBMC
	FirmwareBIOS
	FirmwareCPLD
	FirmwareFPGA
	FirmwareNIC
	FirmwareHBA
	FirmwareHMC
)

// String returns the type's upper-case name, e.g. "BMC".
func (t FirmwareType) String() string {
	switch t {
	case FirmwareBMC:
		return "BMC"
	case FirmwareBIOS:
		return "BIOS"
	case FirmwareCPLD:
		return "CPLD"
	case FirmwareFPGA:
		return "FPGA"
	case FirmwareNIC:
		return "NIC"
	case FirmwareHBA:
		return "HBA"
	case FirmwareHMC:
		return "HMC"
	default:
		return "UNKNOWN"
	}
}

// firmwareRules are upstream's substring rules, in the order they are
// tried: the first rule with a word found in the lower-cased hint wins, so
// HGX_FW_BMC_0 (the HMC's own BMC firmware) is BMC and HGX_FW_GPU_0 is HMC.
var firmwareRules = []struct {
	words []string
	t     FirmwareType
}{
	{[]string{"bmc"}, FirmwareBMC},
	{[]string{"bios", "uefi"}, FirmwareBIOS},
	{[]string{"cpld"}, FirmwareCPLD},
	{[]string{"fpga", "smr"}, FirmwareFPGA},
	{[]string{"nic"}, FirmwareNIC},
	{[]string{"hba"}, FirmwareHBA},
	{[]string{"hmc", "hgx"}, FirmwareHMC},
}

// ClassifyFirmware returns the type of a component from a hint: its id and
// its inventory URI or component name, space-separated.
func ClassifyFirmware(hint string) FirmwareType {
	lower := strings.ToLower(hint)
	for _, r := range firmwareRules {
		for _, w := range r.words {
			if strings.Contains(lower, w) {
				return r.t
			}
		}
	}
	return FirmwareUnknown
}
