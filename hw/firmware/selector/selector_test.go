package selector_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/firmware/selector"
	"github.com/rmsd/rmsd/hw/fwupdate"
)

func sample(t *testing.T) manifest.Metadata {
	t.Helper()
	b, err := os.ReadFile("../manifest/testdata/dgxgb200_1.3.6.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(b, manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m.Metadata()
}

func names(ts []fwupdate.Target) string {
	var out []string
	for _, t := range ts {
		s := t.Component + "=" + filepath.Base(t.File)
		if t.ActivateAfter {
			s += "!"
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

func componentNames(cs []manifest.Component) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return strings.Join(out, ",")
}

func TestNoFilterSelectsEverythingButTheNICs(t *testing.T) {
	md := sample(t)
	comps, ok := selector.Components(md, hw.ComputeGB200Nvidia, selector.Filters{}, "prod")
	if !ok {
		t.Fatal("no filter left the compute tray out")
	}
	got := componentNames(comps)
	if strings.Contains(got, "CX7") || strings.Contains(got, "BF3") {
		t.Errorf("NIC components selected without opting in: %s", got)
	}
	if !strings.Contains(got, "BMC") || !strings.Contains(got, "HMC") {
		t.Errorf("compute components = %s, want BMC and HMC", got)
	}
	ts, err := selector.Targets("DGXGB200_1.3.6", md, hw.ComputeGB200Nvidia, selector.Filters{}, "", "/fw")
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range ts {
		if !strings.HasPrefix(tg.File, "/fw/") || tg.Version == "" {
			t.Errorf("target %+v: want a file in /fw and the component's version", tg)
		}
	}
}

func TestFiltersListOnlyTheirNodeTypes(t *testing.T) {
	md := sample(t)
	f := selector.NewFilters(map[hw.NodeType][]string{hw.SwitchGB200Nvidia: {"bmc"}}, nil, nil)
	if _, ok := selector.Components(md, hw.ComputeGB200Nvidia, f, "prod"); ok {
		t.Error("a type the filters do not list is still updated")
	}
	comps, ok := selector.Components(md, hw.SwitchGB200Nvidia, f, "prod")
	if !ok || componentNames(comps) != "BMC" {
		t.Errorf("switch components = %q (listed %v), want BMC", componentNames(comps), ok)
	}
	// An empty list selects every component of the type; the raw label
	// matches as well as the normalised name.
	f = selector.NewFilters(map[hw.NodeType][]string{hw.SwitchGB200Nvidia: {}}, nil, nil)
	all, _ := selector.Components(md, hw.SwitchGB200Nvidia, f, "prod")
	if len(all) < 2 {
		t.Errorf("empty filter selected %q", componentNames(all))
	}
	f = selector.NewFilters(map[hw.NodeType][]string{hw.SwitchGB200Nvidia: {"bmc+fpga+erot"}}, nil, nil)
	if comps, _ := selector.Components(md, hw.SwitchGB200Nvidia, f, "prod"); componentNames(comps) != "BMC" {
		t.Errorf("label filter selected %q", componentNames(comps))
	}
}

func TestEnumFilterWinsOverDescriptorFilter(t *testing.T) {
	md := sample(t)
	f := selector.NewFilters(map[hw.NodeType][]string{hw.SwitchGB200Nvidia: {"CPLD"}},
		map[hw.NodeType][]string{hw.SwitchGB200Nvidia: {"BMC"}, hw.ComputeGB200Nvidia: {"HMC"}}, nil)
	if comps, _ := selector.Components(md, hw.SwitchGB200Nvidia, f, "prod"); componentNames(comps) != "CPLD" {
		t.Errorf("switch = %q, want the enum filter's CPLD", componentNames(comps))
	}
	if comps, ok := selector.Components(md, hw.ComputeGB200Nvidia, f, "prod"); !ok || componentNames(comps) != "HMC" {
		t.Errorf("compute = %q, want the descriptor filter's HMC", componentNames(comps))
	}
}

func TestGlobalListAppliesToUnlistedTypes(t *testing.T) {
	md := sample(t)
	f := selector.NewFilters(nil, nil, []string{"BMC"})
	for _, nt := range []hw.NodeType{hw.SwitchGB200Nvidia, hw.ComputeGB200Nvidia} {
		if comps, ok := selector.Components(md, nt, f, "prod"); !ok || componentNames(comps) != "BMC" {
			t.Errorf("%s = %q, want BMC", nt.Name(), componentNames(comps))
		}
	}
}

func TestNICsAreOptInAndRefusedWhenFlashable(t *testing.T) {
	md := sample(t)
	f := selector.NewFilters(map[hw.NodeType][]string{hw.ComputeGB200Nvidia: {"CX7"}}, nil, nil)
	comps, _ := selector.Components(md, hw.ComputeGB200Nvidia, f, "prod")
	if componentNames(comps) != "CX7" {
		t.Fatalf("opt-in CX7 selected %q", componentNames(comps))
	}
	// The sample's CX7 has no downloadable package: nothing to flash.
	_, err := selector.Targets("DGXGB200_1.3.6", md, hw.ComputeGB200Nvidia, f, "prod", "/fw")
	var none *selector.NoComponentsError
	if !errors.As(err, &none) || !strings.Contains(err.Error(), "component filters") {
		t.Errorf("CX7 without a package: err = %v, want a NoComponentsError naming the filters", err)
	}
}

func TestChannelSelectsPackages(t *testing.T) {
	md := sample(t)
	if _, err := selector.Targets("X", md, hw.SwitchGB200Nvidia, selector.Filters{}, "dev", "/fw"); err == nil {
		t.Error("a channel the manifest has no package for produced targets")
	} else if !strings.Contains(err.Error(), "no dev firmware") {
		t.Errorf("err = %v", err)
	}
	if ts, err := selector.Targets("X", md, hw.SwitchGB200Nvidia, selector.Filters{}, "PROD", "/fw"); err != nil || len(ts) == 0 {
		t.Errorf("PROD: %v %v", names(ts), err)
	}
}

// gb300 is a GB300 manifest whose compute SKU carries the Supermicro
// packages out of order, plus an HMC package with a generic name.
func gb300(t *testing.T, extra string) manifest.Metadata {
	t.Helper()
	loc := func(name string) string {
		return fmt.Sprintf(`{"Location":"https://example.invalid/%s","LocationType":"HTTPS","FileName":%q,"Type":"Firmware","Sha256":"%064d"}`, name, name, 0)
	}
	entry := func(comp, name string) string {
		return fmt.Sprintf(`{"Component":%q,"Version":"1.0","Type":"Prod","Locations":[%s]}`, comp, loc(name))
	}
	fw := []string{entry("BMC", "SMC_OBMC_GB300_1.0.bin"), entry("BIOS", "BIOS_GB300_1.0.bin"), entry("HMC", "gb300_hmc_nosbios_1.0.fwpkg")}
	if extra != "" {
		fw = append(fw, entry("CPLD", extra))
	}
	doc := fmt.Sprintf(`{"ProductName":"GB300","Milestones":[{"Name":"1.0","BoardSKUs":[{"Type":"Compute Node","Components":{"Firmware":[%s]}}]}]}`,
		strings.Join(fw, ","))
	m, err := manifest.Parse([]byte(doc), manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m.Metadata()
}

func TestSupermicroGB300Order(t *testing.T) {
	md := gb300(t, "")
	ts, err := selector.Targets("GB300_1.0", md, hw.ComputeGB300Supermicro, selector.Filters{}, "prod", "/fw")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(ts), "HMC=gb300_hmc_nosbios_1.0.fwpkg! BIOS=BIOS_GB300_1.0.bin! BMC=SMC_OBMC_GB300_1.0.bin"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if err := selector.CheckSupermicroActivation(hw.ComputeGB300Supermicro, ts, false); err == nil {
		t.Error("nosbios and BIOS without activation accepted")
	}
	if err := selector.CheckSupermicroActivation(hw.ComputeGB300Supermicro, ts[2:], false); err != nil {
		t.Errorf("host BMC alone without activation refused: %v", err)
	}
	// Another GB300 compute type keeps manifest order, no extra activation.
	ts, _ = selector.Targets("GB300_1.0", md, hw.ComputeGB300Nvidia, selector.Filters{}, "prod", "/fw")
	if strings.Contains(names(ts), "!") {
		t.Errorf("non-Supermicro tray got staged activations: %s", names(ts))
	}
	if _, err := selector.Targets("GB300_1.0", gb300(t, "cpld_1.0.bin"), hw.ComputeGB300Supermicro, selector.Filters{}, "prod", "/fw"); err == nil {
		t.Error("a Supermicro package outside the sequence was accepted")
	}
}

func TestUnmatchedNamesFilterEntriesThatSelectNothing(t *testing.T) {
	md := sample(t)
	f := selector.NewFilters(map[hw.NodeType][]string{hw.SwitchGB200Nvidia: {"BMC", "GPU"}}, nil, nil)
	if got := selector.Unmatched(md, hw.SwitchGB200Nvidia, f); len(got) != 1 || got[0] != "gpu" {
		t.Errorf("unmatched = %q, want [gpu]", got)
	}
}

func TestExpectedVersionOfBundles(t *testing.T) {
	cases := []struct {
		c    manifest.Component
		want string
	}{
		{manifest.Component{Name: "BMC", Version: "B-1"}, "B-1"},
		{manifest.Component{Name: "BMC", Version: "bundle-7", Subcomponents: []manifest.Subcomponent{{Name: "EROT", Version: "E-1"}, {Name: "bmc", Version: "B-2"}}}, "B-2"},
		{manifest.Component{Name: "PowerShelfFW", Version: "PR-2025.04", Subcomponents: []manifest.Subcomponent{{Name: "PR1 PSU", Version: "C1.07"}}}, ""},
	}
	for _, c := range cases {
		if got := selector.ExpectedVersion(c.c); got != c.want {
			t.Errorf("ExpectedVersion(%+v) = %q, want %q", c.c, got, c.want)
		}
	}
}
