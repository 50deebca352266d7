package compare_test

import (
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/compare"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/platform"
)

func TestComponentStatuses(t *testing.T) {
	shelf := func(pmc string) []platform.Firmware { return redfish("FW_PMC_0", pmc, "FW_PSU_0", "C1.06") }
	psu := manifest.Component{Name: "PowerShelfFW", Version: "PR-2025.03", Subcomponents: []manifest.Subcomponent{
		{Name: "PR1 PSU", Version: "C1.06", SKUID: "PR1"}, {Name: "PR1 PMC", Version: "1.2.7", SKUID: "PR1"},
		{Name: "PR3 PSU", Version: "D2.01", SKUID: "PR3"}, {Name: "PR3 PMC", Version: "1.3.0", SKUID: "PR3"},
	}}
	bmc := manifest.Component{Name: "BMC", Version: "GB200Nvl-25.03-4", Artifacts: []manifest.ComponentArtifact{{Target: "bmc"}}}
	tests := []struct {
		name string
		comp manifest.Component
		inv  []platform.Firmware
		want compare.Result
	}{
		{"matched, without regard to case", bmc, redfish("FW_BMC_0", "gb200nvl-25.03-4 "),
			compare.Result{Component: "BMC", InstalledComponent: "FW_BMC_0", InstalledVersion: "gb200nvl-25.03-4",
				ProposedVersion: "GB200Nvl-25.03-4", Status: compare.Matched, Target: "bmc"}},
		{"mismatched", bmc, redfish("FW_BMC_0", "GB200Nvl-25.06-3"),
			compare.Result{Component: "BMC", InstalledComponent: "FW_BMC_0", InstalledVersion: "GB200Nvl-25.06-3",
				ProposedVersion: "GB200Nvl-25.03-4", Status: compare.Mismatched, Target: "bmc",
				Reason: "FW_BMC_0 runs GB200Nvl-25.06-3, the manifest proposes GB200Nvl-25.03-4"}},
		{"missing", bmc, redfish("FW_CPLD_0", "1"),
			compare.Result{Component: "BMC", ProposedVersion: "GB200Nvl-25.03-4", Status: compare.Missing, Target: "bmc",
				Reason: "no firmware inventory entry of the node holds BMC"}},
		{"no proposed version", manifest.Component{Name: "CPLD"}, redfish("FW_CPLD_0", "0.1.0.8"),
			compare.Result{Component: "CPLD", InstalledComponent: "FW_CPLD_0", InstalledVersion: "0.1.0.8", Status: compare.Unverified,
				Target: "/redfish/v1/UpdateService/FirmwareInventory/FW_CPLD_0", Reason: "the manifest gives no version for CPLD"}},
		{"no installed version", manifest.Component{Name: "FPGA", Version: "0.1C"}, nvue("FPGA", "N/A"),
			compare.Result{Component: "FPGA", InstalledComponent: "FPGA", InstalledVersion: "N/A", ProposedVersion: "0.1C",
				Status: compare.Unverified, Target: "FPGA", Reason: "FPGA reports no version"}},
		// A PR3 shelf runs the PR3 PMC version: matched, and the SKU says
		// which of the fungible parts it is.
		{"subcomponent of a second SKU", psu, shelf("1.3.0"),
			compare.Result{Component: "PowerShelfFW", InstalledComponent: "FW_PMC_0", InstalledVersion: "1.3.0", ProposedVersion: "1.3.0",
				Status: compare.Matched, Target: "/redfish/v1/UpdateService/FirmwareInventory/FW_PMC_0", SKUID: "PR3"}},
		{"subcomponent mismatched", psu, shelf("1.2.3"),
			compare.Result{Component: "PowerShelfFW", InstalledComponent: "FW_PMC_0", InstalledVersion: "1.2.3", ProposedVersion: "1.2.7",
				Status: compare.Mismatched, Target: "/redfish/v1/UpdateService/FirmwareInventory/FW_PMC_0", SKUID: "PR1",
				Reason: "FW_PMC_0 runs 1.2.3, the manifest proposes 1.2.7"}},
	}
	for _, tt := range tests {
		if got := compare.Component(tt.comp, tt.inv); got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
		}
	}
}

// The sample manifest against a switch of the simulator's initial
// firmware: the components the switch runs other versions of differ, and
// those it runs the proposed ones of match.
func TestNodeAgainstASwitch(t *testing.T) {
	comps := sampleComponents(t, hw.SwitchGB200Nvidia)
	inv := nvue("BMC", "88.0002.1300", "EROT", "01.04.0031.0000_n04", "FPGA", "0.1C", "BIOS", "0ACTV035", "CPLD1", "0.1.0.6")
	var list []manifest.Component
	for _, n := range []string{"BMC", "BIOS", "CPLD"} {
		list = append(list, comps[n])
	}
	rs := compare.Node(list, inv)
	var got []string
	for _, r := range rs {
		got = append(got, r.Component+"="+r.Status.String())
	}
	if strings.Join(got, " ") != "BMC=matched BIOS=mismatched CPLD=matched" || compare.Matches(rs) {
		t.Errorf("comparison %v, matches %v", got, compare.Matches(rs))
	}
	if !compare.Matches(rs[:1]) || compare.Matches(nil) {
		t.Error("Matches: one matched component must match, none must not")
	}
}

func TestNotCompared(t *testing.T) {
	rs := compare.NotCompared([]manifest.Component{{Name: "BMC", Version: "1", Artifacts: []manifest.ComponentArtifact{{Target: "bmc"}}}}, "read failed")
	want := compare.Result{Component: "BMC", ProposedVersion: "1", Status: compare.Unverified, Target: "bmc", Reason: "read failed"}
	if len(rs) != 1 || rs[0] != want || compare.Matches(rs) {
		t.Errorf("NotCompared = %+v", rs)
	}
	if rs := compare.NotCompared(nil, "x"); rs == nil || len(rs) != 0 {
		t.Errorf("NotCompared(nil) = %#v, want an empty list", rs)
	}
}
