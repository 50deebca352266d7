package compare

import (
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/platform"
)

// Status is the outcome of one component's comparison.
type Status int

// The statuses, numbered as the wire's FirmwareComparisonStatus.
const (
	Matched Status = iota + 1
	Mismatched
	Missing
	Unverified
)

func (s Status) String() string {
	switch s {
	case Matched:
		return "matched"
	case Mismatched:
		return "mismatched"
	case Missing:
		return "missing"
	case Unverified:
		return "unverified"
	}
	return "unspecified"
}

// Result is one manifest component compared with a node's inventory.
type Result struct {
	// Component is the manifest component's (normalised) name.
	Component string
	// InstalledComponent and InstalledVersion are the inventory entry Find
	// matched, empty when none did.
	InstalledComponent string
	InstalledVersion   string
	// ProposedVersion is the version compared with (see Component).
	ProposedVersion string
	Status          Status
	// Target is what an update names the component by: its artifact's
	// Target, else the matched entry's Redfish URI, else its ID.
	Target string
	// Reason explains every status but Matched.
	Reason string
	// SKUID is the manifest SKU of the subcomponent version compared with,
	// when it names one.
	SKUID string
}

// proposal is one version the manifest accepts for an entry.
type proposal struct{ version, skuID string }

// Component compares manifest component c with a node's inventory. The
// entry is found with Find. The versions it is compared with are those of
// c's subcomponents that describe the entry (a subcomponent label sharing a
// word with the entry's id: "PR1 PMC" for FW_PMC_0, "CPLD1" for CPLD1),
// else c's own Version. Several subcomponents may describe one entry (the
// same part of different SKUs, "PR1 PMC" and "PR3 PMC"): the entry matches
// when it runs any of their versions, and SKUID says which.
func Component(c manifest.Component, inv []platform.Firmware) Result {
	r := Result{Component: c.Name, ProposedVersion: strings.TrimSpace(c.Version), Target: artifactTarget(c)}
	fw, ok := Find(c, inv)
	if !ok {
		r.Status, r.Reason = Missing, fmt.Sprintf("no firmware inventory entry of the node holds %s", c.Name)
		return r
	}
	r.InstalledComponent, r.InstalledVersion = fw.ID, strings.TrimSpace(fw.Version)
	if r.Target == "" {
		r.Target = fw.URI
	}
	if r.Target == "" {
		r.Target = fw.ID
	}
	props := proposals(c, fw)
	if len(props) == 0 {
		r.Status, r.Reason = Unverified, fmt.Sprintf("the manifest gives no version for %s", c.Name)
		return r
	}
	r.ProposedVersion, r.SKUID = props[0].version, props[0].skuID
	if !knownVersion(r.InstalledVersion) {
		r.Status, r.Reason = Unverified, fmt.Sprintf("%s reports no version", fw.ID)
		return r
	}
	for _, p := range props {
		if strings.EqualFold(p.version, r.InstalledVersion) {
			r.ProposedVersion, r.SKUID, r.Status = p.version, p.skuID, Matched
			return r
		}
	}
	r.Status = Mismatched
	r.Reason = fmt.Sprintf("%s runs %s, the manifest proposes %s", fw.ID, r.InstalledVersion, r.ProposedVersion)
	return r
}

// Node compares every component of comps, in order.
func Node(comps []manifest.Component, inv []platform.Firmware) []Result {
	out := make([]Result, 0, len(comps))
	for _, c := range comps {
		out = append(out, Component(c, inv))
	}
	return out
}

// NotCompared is the comparison of a node that could not be read: every
// component Unverified, for reason.
func NotCompared(comps []manifest.Component, reason string) []Result {
	out := make([]Result, 0, len(comps))
	for _, c := range comps {
		out = append(out, Result{Component: c.Name, ProposedVersion: strings.TrimSpace(c.Version), Status: Unverified,
			Target: artifactTarget(c), Reason: reason})
	}
	return out
}

// Matches reports whether a node matches the manifest: at least one
// component compared, and every one Matched.
func Matches(rs []Result) bool {
	for _, r := range rs {
		if r.Status != Matched {
			return false
		}
	}
	return len(rs) > 0
}

// artifactTarget is the first Target c's artifacts name, or "".
func artifactTarget(c manifest.Component) string {
	for _, a := range c.Artifacts {
		if a.Target != "" {
			return a.Target
		}
	}
	return ""
}

// proposals lists the versions the manifest accepts for entry fw of
// component c: its describing subcomponents', else c's own; none when the
// manifest gives no version.
func proposals(c manifest.Component, fw platform.Firmware) []proposal {
	id := words(fw.ID)
	var out []proposal
	for _, s := range c.Subcomponents {
		v := strings.TrimSpace(s.Version)
		if v != "" && describes(s.Name, id) {
			out = append(out, proposal{v, strings.TrimSpace(s.SKUID)})
		}
	}
	if len(out) == 0 && strings.TrimSpace(c.Version) != "" {
		out = append(out, proposal{version: strings.TrimSpace(c.Version)})
	}
	return out
}

// describes reports whether a subcomponent label shares a word with an
// inventory id's words, ignoring words that name no part ("fw", numbers).
func describes(label string, id []string) bool {
	for _, w := range words(label) {
		if w == "fw" || w == "firmware" || strings.Trim(w, "0123456789") == "" {
			continue
		}
		for _, x := range id {
			if x == w {
				return true
			}
		}
	}
	return false
}

// knownVersion reports whether a device reported a version: not empty and
// not the "N/A" an NVUE component without one reads.
func knownVersion(v string) bool { return v != "" && !strings.EqualFold(v, "N/A") }
