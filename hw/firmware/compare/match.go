package compare

import (
	"strings"

	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/platform"
)

// Find returns the inventory entry that holds the running firmware of
// manifest component c, and false when none does. The first rule that
// names an entry wins:
//
//  1. Target: an entry whose URI or ID is an artifact's Target, without
//     regard to case ("bmc" names a switch's NVUE component BMC).
//  2. Name: an entry whose ID is c's Name or its manifest label
//     (SourceComponent), compared as the selector compares names: without
//     regard to case, spaces, '-', '_' or '+' (NVUE's BIOS, FPGA, EROT).
//  3. Words: the first entry, in inventory order, whose ID (split at '_',
//     '-', '.', '/' and spaces) has the words of c's kind and none of the
//     words that mark another part's firmware (see kindWords). This is how
//     a compute tray's Redfish ids are matched: BMC is FW_BMC_0 (not the
//     HMC's HGX_FW_BMC_0 nor FW_ERoT_BMC_0), HMC is HGX_FW_BMC_0, BIOS is
//     FW_UEFI_0, CPLD is FW_CPLD_0 (a switch's CPLD1), PowerShelfFW is the
//     shelf's FW_PMC_0, and a name the rule does not know is looked for as
//     a word of its own (GPU is HGX_FW_GPU_0).
//
// The platform's Type of an entry is not used: upstream's classification
// calls HGX_FW_BMC_0 and FW_ERoT_BMC_0 BMC firmware, which would make the
// tray's BMC ambiguous.
func Find(c manifest.Component, inv []platform.Firmware) (platform.Firmware, bool) {
	for _, a := range c.Artifacts {
		if a.Target == "" {
			continue
		}
		for _, fw := range inv {
			if strings.EqualFold(fw.URI, a.Target) || strings.EqualFold(fw.ID, a.Target) {
				return fw, true
			}
		}
	}
	names := map[string]bool{}
	for _, n := range []string{c.Name, c.SourceComponent} {
		if k := manifest.Normalise(n); k != "" {
			names[k] = true
		}
	}
	for _, fw := range inv {
		if names[manifest.Normalise(fw.ID)] {
			return fw, true
		}
	}
	kw := wordsOf(c.Name)
	for _, fw := range inv {
		if kw.holds(words(fw.ID)) {
			return fw, true
		}
	}
	return platform.Firmware{}, false
}

// kindRule says which inventory ids hold a kind of component: an id with
// every word of one of anyOf and none of noneOf.
type kindRule struct {
	anyOf  [][]string
	noneOf []string
}

// kindWords are the words of the components the manifest package names
// (manifest.Component.Name), by normalised name. A word of an id matches a
// rule's word when it is that word, or that word followed by digits
// (CPLD1, CPLD2 are CPLD).
var kindWords = map[string]kindRule{
	"bmc":          {anyOf: [][]string{{"bmc"}}, noneOf: []string{"hgx", "hmc", "erot"}},
	"hmc":          {anyOf: [][]string{{"hmc"}, {"hgx", "bmc"}}, noneOf: []string{"erot"}},
	"bios":         {anyOf: [][]string{{"bios"}, {"sbios"}, {"uefi"}}, noneOf: []string{"hgx", "erot"}},
	"cpld":         {anyOf: [][]string{{"cpld"}}, noneOf: []string{"hgx"}},
	"fpga":         {anyOf: [][]string{{"fpga"}}, noneOf: []string{"hgx"}},
	"erot":         {anyOf: [][]string{{"erot"}}, noneOf: []string{"hgx"}},
	"powershelffw": {anyOf: [][]string{{"pmc"}}},
	"cx7":          {anyOf: [][]string{{"cx7"}}},
	"cx8":          {anyOf: [][]string{{"cx8"}}},
	"bf3nic":       {anyOf: [][]string{{"bf3", "nic"}}},
	"bf3bfb":       {anyOf: [][]string{{"bf3", "bfb"}}},
}

// wordsOf returns the rule of a component name: its kind's, or for a name
// the table does not know, the name itself as the one word.
func wordsOf(name string) kindRule {
	n := manifest.Normalise(name)
	if r, ok := kindWords[n]; ok {
		return r
	}
	if n == "" {
		return kindRule{}
	}
	return kindRule{anyOf: [][]string{{n}}}
}

// holds reports whether an id of the given words holds the rule's kind.
func (r kindRule) holds(id []string) bool {
	for _, w := range r.noneOf {
		if hasWord(id, w) {
			return false
		}
	}
	for _, set := range r.anyOf {
		all := true
		for _, w := range set {
			all = all && hasWord(id, w)
		}
		if all {
			return true
		}
	}
	return false
}

// hasWord reports whether words has w, or w followed by digits.
func hasWord(words []string, w string) bool {
	for _, x := range words {
		if rest, ok := strings.CutPrefix(x, w); ok && strings.Trim(rest, "0123456789") == "" {
			return true
		}
	}
	return false
}

// words splits an id or a label into lower-case words at '_', '-', '+',
// '.', '/' and spaces.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		switch r {
		case '_', '-', '+', '.', '/', ' ', '\t':
			return true
		}
		return false
	})
}
