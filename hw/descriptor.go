package hw

import (
	"fmt"
	"sort"
	"strings"
)

// The node descriptor attribute keys. A descriptor names a node's identity
// as role + vendor + product family; inventory_profile optionally selects an
// expected-inventory profile; fm_config:<key> entries are accepted for
// compatibility with the fabric configuration and otherwise ignored.
const (
	AttrRole             = "role"
	AttrVendor           = "vendor"
	AttrProductFamily    = "product_family"
	AttrInventoryProfile = "inventory_profile"
	attrFabricPrefix     = "fm_config:"
)

// descriptorKey is a normalised (role, vendor, product family) triple.
type descriptorKey struct{ role, vendor, family string }

// descriptorTypes maps every supported descriptor to its node type.
var descriptorTypes = map[descriptorKey]NodeType{
	{"compute", "nvidia", "gb200"}:     ComputeGB200Nvidia,
	{"compute", "wiwynn", "gb200"}:     ComputeGB200Wiwynn,
	{"compute", "nvidia", "gb300"}:     ComputeGB300Nvidia,
	{"compute", "lenovo", "gb300"}:     ComputeGB300Lenovo,
	{"compute", "supermicro", "gb300"}: ComputeGB300Supermicro,
	{"compute", "nvidia", "vrnvl72"}:   ComputeVRNVL72Nvidia,
	{"switch", "nvidia", "gb200"}:      SwitchGB200Nvidia,
	{"switch", "nvidia", "gb300"}:      SwitchGB300Nvidia,
	{"switch", "nvidia", "vrnvl72"}:    SwitchVRNVL72Nvidia,
	{"powershelf", "liteon", "gb200"}:  PowerShelfGB200Liteon,
	{"powershelf", "liteon", "gb300"}:  PowerShelfGB300Liteon,
	{"powershelf", "delta", "gb200"}:   PowerShelfGB200Delta,
	{"powershelf", "delta", "gb300"}:   PowerShelfGB300Delta,
}

// normaliseAttr folds case and drops spaces, hyphens and underscores, so
// "Power Shelf", "power_shelf" and "POWER-SHELF" all read "powershelf".
func normaliseAttr(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r == ' ' || r == '-' || r == '_' || r == '\t' {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// DescriptorError says why a node descriptor names no supported node type.
// The gRPC edge answers it with INVALID_ARGUMENT.
type DescriptorError struct{ Reason string }

func (e *DescriptorError) Error() string { return "node descriptor: " + e.Reason }

// ResolveDescriptor returns the node type a descriptor names. Every one of
// role, vendor and product_family is required; any attribute other than
// those, inventory_profile and fm_config:* is rejected.
func ResolveDescriptor(attrs map[string]string) (NodeType, error) {
	var unsupported []string
	for k := range attrs {
		switch {
		case k == AttrRole, k == AttrVendor, k == AttrProductFamily, k == AttrInventoryProfile:
		case strings.HasPrefix(k, attrFabricPrefix):
		default:
			unsupported = append(unsupported, k)
		}
	}
	if len(unsupported) > 0 {
		sort.Strings(unsupported)
		return NodeTypeUnspecified, &DescriptorError{Reason: "unsupported attribute(s) " + quoteList(unsupported, 5)}
	}
	var missing []string
	for _, k := range []string{AttrRole, AttrVendor, AttrProductFamily} {
		if strings.TrimSpace(attrs[k]) == "" {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return NodeTypeUnspecified, &DescriptorError{Reason: "missing or empty " + strings.Join(missing, ", ")}
	}
	key := descriptorKey{normaliseAttr(attrs[AttrRole]), normaliseAttr(attrs[AttrVendor]), normaliseAttr(attrs[AttrProductFamily])}
	t, ok := descriptorTypes[key]
	if !ok {
		return NodeTypeUnspecified, &DescriptorError{Reason: fmt.Sprintf("no supported node type for role=%s vendor=%s product_family=%s",
			QuoteShort(attrs[AttrRole]), QuoteShort(attrs[AttrVendor]), QuoteShort(attrs[AttrProductFamily]))}
	}
	return t, nil
}

// Descriptor returns the canonical descriptor attributes of a node type.
func (t NodeType) Descriptor() map[string]string {
	for k, v := range descriptorTypes {
		if v == t {
			role := k.role
			if role == "powershelf" {
				role = "power_shelf"
			}
			return map[string]string{AttrRole: role, AttrVendor: k.vendor, AttrProductFamily: k.family}
		}
	}
	return nil
}
