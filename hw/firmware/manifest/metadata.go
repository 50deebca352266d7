package manifest

import (
	"github.com/rmsd/rmsd/hw"
)

// Metadata is what a firmware object offers, in the shape of the wire's
// FirmwareObjectMetadata; the gRPC edge converts it field for field.
type Metadata struct {
	// DeviceComponents has one entry per node type, in node type order.
	DeviceComponents   []DeviceComponents
	SwitchSystemImages []SwitchSystemImage
}

// DeviceComponents are the components that apply to one node type.
type DeviceComponents struct {
	// NodeType may be descriptor-only (e.g. hw.ComputeGB200Wiwynn): the
	// wire carries NodeType.Wire() and the Descriptor.
	NodeType hw.NodeType
	// DeviceType is the SOT label, e.g. "Compute Node", "Switch Tray",
	// "Power Shelf".
	DeviceType string
	Components []Component
}

// Descriptor returns the node type's descriptor attributes (role, vendor,
// product_family), for descriptor-aware clients.
func (d DeviceComponents) Descriptor() map[string]string { return d.NodeType.Descriptor() }

// Component is one normalised component a caller can request.
type Component struct {
	// Name is the normalised name apply filters use ("BMC", "BIOS",
	// "CPLD", "HMC", "PowerShelfFW", "CX7", ...).
	Name    string
	Version string
	Bundle  string
	// SourceComponent is the manifest's raw label, e.g. "BMC+FPGA+EROT".
	SourceComponent string
	Subcomponents   []Subcomponent
	// Artifacts are the cached packages resolved for it; none when the
	// manifest has no downloadable payload for it (e.g. a NIC listed for
	// its version only).
	Artifacts []ComponentArtifact
}

// Subcomponent is a sub-version, used to verify and compare.
type Subcomponent struct {
	Name    string
	Version string
	SKUID   string
}

// ComponentArtifact is a cached package of a component.
type ComponentArtifact struct {
	// FirmwareType is the channel, lower-case ("prod", "dev", "beta").
	FirmwareType string
	// FileName is the cache file name (Artifact.Name).
	FileName string
	// Target is what the node update API is given: a switch component name
	// ("bmc", "bios", "cpld"), a Redfish target URI (an HMC package), a NIC
	// name, or "" to let the package decide (as upstream does for
	// compute BIOS and CPLD packages and always for power shelves).
	Target string
	Bundle string
}

// SwitchSystemImage is an NVOS image a switch can install.
type SwitchSystemImage struct {
	// SoftwareType is the channel, lower-case.
	SoftwareType string
	Version      string
	PackageName  string
	// ImageFileName is the cache file name, "" when the manifest gives no
	// downloadable image.
	ImageFileName string
	// Required is true when the object's availability waits for the image.
	Required bool
}

// clone copies every slice, so callers can keep or change what they get.
func (m Metadata) clone() Metadata {
	out := Metadata{SwitchSystemImages: append([]SwitchSystemImage(nil), m.SwitchSystemImages...)}
	for _, dc := range m.DeviceComponents {
		c := dc
		c.Components = make([]Component, len(dc.Components))
		for i, comp := range dc.Components {
			comp.Subcomponents = append([]Subcomponent(nil), comp.Subcomponents...)
			comp.Artifacts = append([]ComponentArtifact(nil), comp.Artifacts...)
			c.Components[i] = comp
		}
		out.DeviceComponents = append(out.DeviceComponents, c)
	}
	return out
}
