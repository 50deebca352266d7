package manifest

import (
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// The device type labels of the metadata, upstream's lookup keys; power
// shelf components nested under a compute SKU are labelled Power Shelf.
const (
	DeviceTypeCompute    = "Compute Node"
	DeviceTypeSwitch     = "Switch Tray"
	DeviceTypePowerShelf = "Power Shelf"
)

// Normalise folds case and drops spaces, hyphens, underscores and plus
// signs: "VR-NVL72" → "vrnvl72", "BMC+FPGA+EROT" → "bmcfpgaerot". It is how
// every component, SKU and filter name is compared (manifest, selector,
// compare).
func Normalise(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch r {
		case ' ', '\t', '-', '_', '+':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// familyOf reads the product family a ProductName names ("DGXGB200" →
// GB200, "VR-NVL72" → VRNVL72), or "" when it names none. It is
// informational: routing does not depend on it.
func familyOf(productName string) hw.ProductFamily {
	n := Normalise(productName)
	switch {
	case strings.Contains(n, "gb200"):
		return hw.FamilyGB200
	case strings.Contains(n, "gb300"):
		return hw.FamilyGB300
	case strings.Contains(n, "vrnvl72"):
		return hw.FamilyVRNVL72
	}
	return ""
}

// route is where a board SKU's components go: every node type of kind,
// of family when family is set, of every family otherwise.
type route struct {
	kind   hw.Kind
	family hw.ProductFamily
	// deviceType is the metadata's device type: upstream's lookup key
	// ("Compute Node", "Switch Tray", "Power Shelf"), however the SKU's
	// Type is spelt.
	deviceType string
}

// routeOf reads a board SKU's Type, as upstream's lookup_key_from_board_type
// does: "Compute Node" (or "Compute Tray"), "Switch Tray" and "Power Shelf"
// (or "PowerShelf") route to every node type of that kind, whatever the
// manifest's ProductName (upstream's lookup_key_for_device_type and
// node_types_for_device_type map each node type to one of these keys, not
// to a product). The legacy "VRNVL72 Compute Node" routes to VR-NVL72
// compute trays only. ok is false for an unknown Type.
func routeOf(skuType string) (route, bool) {
	switch Normalise(skuType) {
	case "computenode", "computetray":
		return route{kind: hw.KindCompute, deviceType: DeviceTypeCompute}, true
	case "vrnvl72computenode":
		return route{hw.KindCompute, hw.FamilyVRNVL72, DeviceTypeCompute}, true
	case "switchtray":
		return route{kind: hw.KindSwitch, deviceType: DeviceTypeSwitch}, true
	case "powershelf":
		return route{kind: hw.KindPowerShelf, deviceType: DeviceTypePowerShelf}, true
	}
	return route{}, false
}

// nodeTypes lists every node type (wire enum and descriptor-only) of the
// route, in numeric order.
func (r route) nodeTypes() []hw.NodeType {
	var out []hw.NodeType
	for _, t := range hw.AllNodeTypes() {
		if t.Kind() == r.kind && (r.family == "" || t.Family() == r.family) {
			out = append(out, t)
		}
	}
	return out
}
