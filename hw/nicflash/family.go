package nicflash

import "strings"

// Family is an adapter family RMS flashes with Flint.
type Family string

// The families, named as RMS components (upstream's FlintDeviceFamily).
const (
	CX7    Family = "CX7"
	CX8    Family = "CX8"
	BF3NIC Family = "BF3_NIC"
)

// FamilyOf resolves a component name to its family, as upstream's
// FlintDeviceFamily::from_component does. BF3_BFB (a BlueField OS bundle,
// installed through rshim rather than Flint) is not one.
func FamilyOf(component string) (Family, bool) {
	switch strings.ToUpper(strings.TrimSpace(component)) {
	case "CX7", "CONNECTX7", "CONNECTX-7":
		return CX7, true
	case "CX8", "CONNECTX8", "CONNECTX-8":
		return CX8, true
	case "BF3", "BF3_NIC", "BF3NIC", "BLUEFIELD3", "BLUEFIELD-3":
		return BF3NIC, true
	}
	return "", false
}

// mstType is the device-type prefix mst status -v prints for a family.
func (f Family) mstType() string {
	switch f {
	case CX7:
		return "ConnectX7"
	case CX8:
		return "ConnectX8"
	default:
		return "BlueField3"
	}
}

// familyOfMSTType classifies an mst status DEVICE_TYPE ("ConnectX7(rev:0)").
func familyOfMSTType(t string) (Family, bool) {
	var b strings.Builder
	for _, r := range strings.ToLower(t) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	n := b.String()
	switch {
	case strings.HasPrefix(n, "connectx7"):
		return CX7, true
	case strings.HasPrefix(n, "connectx8"):
		return CX8, true
	case strings.HasPrefix(n, "bluefield3"):
		return BF3NIC, true
	}
	return "", false
}
