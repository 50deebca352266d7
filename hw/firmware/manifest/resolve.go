package manifest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// resolver turns a checked document into metadata and artifacts, reporting
// every payload it cannot use.
type resolver struct {
	m     *Manifest
	multi map[hw.NodeType]bool
	p     *problems

	groups    map[hw.NodeType]*group
	artifacts []Artifact
	byName    map[string]int // cache name → index in artifacts
	meta      Metadata
	warnings  []string
}

// group collects one node type's components.
type group struct {
	dc    DeviceComponents
	index map[string]int // normalised name → index in dc.Components
}

// candidate is a payload location and where it sits in the document.
type candidate struct {
	loc Location
	at  string
}

func newResolver(m *Manifest, opts Options, p *problems) *resolver {
	r := &resolver{m: m, p: p, multi: map[hw.NodeType]bool{}, groups: map[hw.NodeType]*group{}, byName: map[string]int{}}
	for _, t := range opts.MultiPackage {
		r.multi[t] = true
	}
	return r
}

func (r *resolver) run() {
	for i, sku := range r.m.Milestone.BoardSKUs {
		at := fmt.Sprintf("Milestones[0].BoardSKUs[%d]", i)
		if rt, routed := routeOf(sku.Type); routed {
			for j, fw := range sku.Components.Firmware {
				r.addFirmware(rt, sku, i, fw, fmt.Sprintf("%s.Components.Firmware[%d]", at, j))
			}
		} else {
			r.warnf("board SKU %s has Type %s, which routes to no node type; its firmware is ignored", skuLabel(sku, i), hw.QuoteShort(sku.Type))
		}
		for j, sw := range sku.Components.Software {
			if isNVOS(sw.Component) {
				r.addImage(sw, fmt.Sprintf("%s.Components.Software[%d]", at, j))
			}
		}
	}
	types := make([]hw.NodeType, 0, len(r.groups))
	for t := range r.groups {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
	for _, t := range types {
		r.meta.DeviceComponents = append(r.meta.DeviceComponents, r.groups[t].dc)
	}
}

// addFirmware adds firmware entry fw of board SKU number i, routed to rt,
// to every node type it applies to.
func (r *resolver) addFirmware(rt route, sku BoardSKU, i int, fw Entry, at string) {
	if rt.kind == hw.KindCompute && isPowerShelfComponent(fw.Component) {
		// The GB200 sample nests "Powershelf FW" under its compute SKU
		// (upstream's lookup_keys_for_board_sku adds the power shelf key
		// to a compute board's).
		rt = route{hw.KindPowerShelf, rt.family, DeviceTypePowerShelf}
	}
	deviceType := rt.deviceType
	types := rt.nodeTypes()
	if len(types) == 0 {
		r.warnf("component %s of board SKU %s applies to no node type (%s has no %s); it is ignored",
			hw.QuoteShort(fw.Component), skuLabel(sku, i), rt.family, rt.kind)
		return
	}
	cands := candidates(fw, at)
	for _, t := range types {
		r.addComponent(t, deviceType, fw, cands)
	}
}

func (r *resolver) warnf(format string, args ...any) {
	r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
}

func skuLabel(sku BoardSKU, i int) string {
	if n := strings.TrimSpace(sku.Name); n != "" {
		return hw.QuoteShort(n)
	}
	return fmt.Sprintf("#%d", i)
}

// candidates lists an entry's payload locations: its own, then its
// subcomponents', in document order.
func candidates(fw Entry, at string) []candidate {
	var out []candidate
	for k, l := range fw.Locations {
		if isPayload(l) {
			out = append(out, candidate{l, fmt.Sprintf("%s.Locations[%d]", at, k)})
		}
	}
	for s, sub := range fw.SubComponents {
		for k, l := range sub.Locations {
			if isPayload(l) {
				out = append(out, candidate{l, fmt.Sprintf("%s.SubComponents[%d].Locations[%d]", at, s, k)})
			}
		}
	}
	return out
}

// addComponent adds a firmware entry to node type t.
func (r *resolver) addComponent(t hw.NodeType, deviceType string, fw Entry, cands []candidate) {
	g := r.groups[t]
	if g == nil {
		g = &group{dc: DeviceComponents{NodeType: t, DeviceType: deviceType}, index: map[string]int{}}
		r.groups[t] = g
	}
	rule := ruleOf(fw.Component)
	selected := cands
	if !r.multi[t] && len(selected) > 1 {
		selected = selected[:1]
	}
	var arts []ComponentArtifact
	for _, c := range selected {
		a, ok := r.artifact(c, fw.Component)
		if !ok {
			continue
		}
		arts = append(arts, ComponentArtifact{
			FirmwareType: channel(fw.Type), FileName: a.Name, Target: rule.targets[t.Kind()], Bundle: strings.TrimSpace(fw.Bundle),
		})
	}
	if i, ok := g.index[rule.name]; ok {
		// A second entry of the same component (another channel): its
		// packages join the first entry's.
		c := &g.dc.Components[i]
		for _, a := range arts {
			if !containsArtifact(c.Artifacts, a) {
				c.Artifacts = append(c.Artifacts, a)
			}
		}
		return
	}
	comp := Component{
		Name: rule.name, Version: strings.TrimSpace(fw.Version), Bundle: strings.TrimSpace(fw.Bundle),
		SourceComponent: strings.TrimSpace(fw.Component), Artifacts: arts,
	}
	for _, sub := range fw.SubComponents {
		comp.Subcomponents = append(comp.Subcomponents, Subcomponent{
			Name: strings.TrimSpace(sub.Component), Version: strings.TrimSpace(sub.Version), SKUID: strings.TrimSpace(sub.SKUID),
		})
	}
	g.index[rule.name] = len(g.dc.Components)
	g.dc.Components = append(g.dc.Components, comp)
}

func containsArtifact(list []ComponentArtifact, a ComponentArtifact) bool {
	for _, x := range list {
		if x == a {
			return true
		}
	}
	return false
}

// addImage adds an NVOS software entry as a switch system image.
func (r *resolver) addImage(sw Entry, at string) {
	img := SwitchSystemImage{SoftwareType: channel(sw.Type), Version: strings.TrimSpace(sw.Version), PackageName: "NVOS"}
	for k, l := range sw.Locations {
		if !isPayload(l) {
			continue
		}
		a, ok := r.artifact(candidate{l, fmt.Sprintf("%s.Locations[%d]", at, k)}, sw.Component)
		if ok {
			img.ImageFileName, img.Required = a.Name, true
			if pn := strings.TrimSpace(l.PackageName); pn != "" {
				img.PackageName = pn
			}
		}
		break
	}
	for _, x := range r.meta.SwitchSystemImages {
		if x == img {
			return
		}
	}
	r.meta.SwitchSystemImages = append(r.meta.SwitchSystemImages, img)
}

// artifact resolves a payload, adding it to the object's artifacts once.
// Two payloads may share a cache name only if they are the same file.
func (r *resolver) artifact(c candidate, component string) (Artifact, bool) {
	a, reason := artifactOf(c.loc, strings.TrimSpace(component))
	if reason != "" {
		r.p.addf("%s: %s", c.at, reason)
		return Artifact{}, false
	}
	if i, ok := r.byName[a.Name]; ok {
		prev := r.artifacts[i]
		if prev.Source != a.Source || prev.Sha256 != a.Sha256 {
			r.p.addf("%s: cache file name %s is also that of another artifact (%s) with a different source or Sha256",
				c.at, hw.QuoteShort(a.Name), hw.QuoteShort(prev.Source.String()))
			return Artifact{}, false
		}
		return prev, true
	}
	r.byName[a.Name] = len(r.artifacts)
	r.artifacts = append(r.artifacts, a)
	return a, true
}

// channel is an entry's Type as apply requests match it: lower-case.
func channel(t string) string { return strings.ToLower(strings.TrimSpace(t)) }
