package selector

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// inBandNICs are the normalised names of the opt-in NIC components, flashed
// in band over the host (Flint) rather than through the BMC.
var inBandNICs = map[string]bool{"cx7": true, "cx8": true, "bf3nic": true, "bf3bfb": true}

// IsInBandNIC reports whether a component is an in-band NIC component.
func IsInBandNIC(name string) bool { return inBandNICs[manifest.Normalise(name)] }

// Channel normalises a request's firmware_type: "" means "prod".
func Channel(firmwareType string) string {
	c := strings.ToLower(strings.TrimSpace(firmwareType))
	if c == "" {
		return "prod"
	}
	return c
}

// Components returns the components of md that node type t gets under f,
// in manifest order, each keeping only its packages of the channel. ok is
// false when f leaves t out. A component with no package of the channel is
// still returned (CompareFirmwareObject compares its version); Targets
// drops it.
func Components(md manifest.Metadata, t hw.NodeType, f Filters, channel string) (comps []manifest.Component, ok bool) {
	fl, ok := f.forType(t)
	if !ok {
		return nil, false
	}
	channel = Channel(channel)
	for _, dc := range md.DeviceComponents {
		if dc.NodeType != t {
			continue
		}
		for _, c := range dc.Components {
			if !fl.selects(c) {
				continue
			}
			c.Artifacts = ofChannel(c.Artifacts, channel)
			comps = append(comps, c)
		}
	}
	return comps, true
}

// selects reports whether the filter picks component c.
func (fl filter) selects(c manifest.Component) bool {
	named := fl.names[manifest.Normalise(c.Name)] || fl.names[manifest.Normalise(c.SourceComponent)]
	if IsInBandNIC(c.Name) {
		return named
	}
	return fl.all || named
}

// ofChannel keeps the artifacts of a channel (and those of no channel).
func ofChannel(arts []manifest.ComponentArtifact, channel string) []manifest.ComponentArtifact {
	var out []manifest.ComponentArtifact
	for _, a := range arts {
		if a.FirmwareType == "" || strings.EqualFold(a.FirmwareType, channel) {
			out = append(out, a)
		}
	}
	return out
}

// Unmatched returns the names of f's entry for t that match no component
// of md for t, sorted, so a caller can be told about a filter that names
// nothing.
func Unmatched(md manifest.Metadata, t hw.NodeType, f Filters) []string {
	fl, ok := f.forType(t)
	if !ok || fl.all {
		return nil
	}
	seen := map[string]bool{}
	for _, dc := range md.DeviceComponents {
		if dc.NodeType != t {
			continue
		}
		for _, c := range dc.Components {
			seen[manifest.Normalise(c.Name)], seen[manifest.Normalise(c.SourceComponent)] = true, true
		}
	}
	var out []string
	for n := range fl.names {
		if !seen[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// NoComponentsError says why a node gets nothing from a manifest.
type NoComponentsError struct {
	ObjectID string
	Type     hw.NodeType
	Channel  string
	Filtered bool
}

func (e *NoComponentsError) Error() string {
	if e.Filtered {
		return fmt.Sprintf("firmware object %s has no %s firmware for node type %s that the component filters select",
			e.ObjectID, e.Channel, e.Type.Name())
	}
	return fmt.Sprintf("firmware object %s has no %s firmware for node type %s", e.ObjectID, e.Channel, e.Type.Name())
}
