package manifest

import (
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// DeviceTypePowerShelf is the device type label of power-shelf components,
// including those nested under a compute SKU.
const DeviceTypePowerShelf = "Power Shelf"

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
// GB200, "VR-NVL72" → VRNVL72), or "".
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

// route is where a board SKU's components go.
type route struct {
	kind   hw.Kind
	family hw.ProductFamily
}

// routeOf reads a board SKU's Type. ok is false for an unknown Type.
func routeOf(skuType string, family hw.ProductFamily) (route, bool) {
	switch Normalise(skuType) {
	case "computenode":
		return route{hw.KindCompute, family}, true
	case "vrnvl72computenode":
		return route{hw.KindCompute, hw.FamilyVRNVL72}, true
	case "switchtray":
		return route{hw.KindSwitch, family}, true
	case "powershelf":
		return route{hw.KindPowerShelf, family}, true
	}
	return route{}, false
}

// nodeTypes lists every node type (wire enum and descriptor-only) of the
// route's family and kind, in numeric order.
func (r route) nodeTypes() []hw.NodeType {
	var out []hw.NodeType
	for _, t := range hw.AllNodeTypes() {
		if t.Kind() == r.kind && t.Family() == r.family {
			out = append(out, t)
		}
	}
	return out
}
