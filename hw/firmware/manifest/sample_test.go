package manifest_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

func parseSample(t *testing.T, opts manifest.Options) *manifest.Manifest {
	t.Helper()
	b, err := os.ReadFile("testdata/dgxgb200_1.3.6.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(b, opts)
	if err != nil {
		t.Fatalf("the sample manifest is refused: %v", err)
	}
	return m
}

// describe renders metadata one line per component, for comparison.
func describe(md manifest.Metadata) []string {
	var out []string
	for _, dc := range md.DeviceComponents {
		for _, c := range dc.Components {
			var arts []string
			for _, a := range c.Artifacts {
				arts = append(arts, fmt.Sprintf("%s:%s->%q", a.FirmwareType, a.FileName, a.Target))
			}
			out = append(out, fmt.Sprintf("%s [%s] %s %s (%s) subs=%d %s",
				dc.NodeType, dc.DeviceType, c.Name, c.Version, c.SourceComponent, len(c.Subcomponents), strings.Join(arts, ",")))
		}
	}
	for _, img := range md.SwitchSystemImages {
		out = append(out, fmt.Sprintf("image %s %s %q %s required=%v", img.SoftwareType, img.Version, img.PackageName, img.ImageFileName, img.Required))
	}
	return out
}

func TestParse_SampleManifest(t *testing.T) {
	m := parseSample(t, manifest.Options{})
	if m.ID != "DGXGB200_1.3.6" || m.Family != hw.FamilyGB200 || m.Milestone.State != "Released" {
		t.Errorf("id %q family %q state %q", m.ID, m.Family, m.Milestone.State)
	}
	if len(m.Warnings) != 0 {
		t.Errorf("warnings: %q", m.Warnings)
	}
	const (
		swBMC  = "nvfw_GB200-P4978_0004_250312.1.0_prod-signed.fwpkg"
		swBIOS = "nvfw_GB200-P4978_0006_250301.1.2_prod-signed.fwpkg"
		swCPLD = "nvfw_GB200-P4978_0009_250211.1.0_prod-signed.fwpkg"
		nvos   = "nvos-amd64-25.02.2553.bin"
		psu    = "liteon_psu_c1.06.tar"
		hmc    = "nvfw_GB200-P4975_0004_250305.1.1_prod-signed.fwpkg"
		bmc    = "nvfw_GB200-P4975_0002_250303.1.0_prod-signed.fwpkg"
	)
	var names []string
	for _, a := range m.Artifacts() {
		names = append(names, a.Name)
		if a.Sha256 != strings.ToLower(a.Sha256) || len(a.Sha256) != 64 {
			t.Errorf("%s: sha256 %q is not lower-case hex", a.Name, a.Sha256)
		}
		if a.Source.Kind != manifest.SourceHTTP || !strings.HasSuffix(a.Source.URL, "/"+a.Name) {
			t.Errorf("%s: source %+v", a.Name, a.Source)
		}
	}
	if got, want := strings.Join(names, " "), strings.Join([]string{swBMC, swBIOS, swCPLD, nvos, psu, hmc, bmc}, " "); got != want {
		t.Errorf("artifacts\n got %s\nwant %s", got, want)
	}
	want := []string{
		`COMPUTE_GB200_NVIDIA [Compute Node] CX7 28.44.1036 (CX7) subs=0 `,
		`COMPUTE_GB200_NVIDIA [Compute Node] BF3_BFB 4.10.0 (BF3_BFB) subs=0 `,
		`COMPUTE_GB200_NVIDIA [Compute Node] BF3_NIC 32.44.1036 (BF3_NIC) subs=0 `,
		`COMPUTE_GB200_NVIDIA [Compute Node] HMC GB200Nvl-25.03-6 (HMC) subs=2 prod:` + hmc + `->"/redfish/v1/Chassis/HGX_Chassis_0"`,
		`COMPUTE_GB200_NVIDIA [Compute Node] BMC GB200Nvl-25.03-4 (BMC) subs=2 prod:` + bmc + `->"bmc"`,
		`POWERSHELF_GB200_LITEON [Power Shelf] PowerShelfFW PR-2025.03 (Powershelf FW) subs=4 prod:` + psu + `->""`,
		`SWITCH_GB200_NVIDIA [Switch Tray] BMC 88.0002.1300 (BMC+FPGA+EROT) subs=3 prod:` + swBMC + `->"bmc"`,
		`SWITCH_GB200_NVIDIA [Switch Tray] BIOS 0ACTV034 (SBIOS+EROT) subs=2 prod:` + swBIOS + `->"bios"`,
		`SWITCH_GB200_NVIDIA [Switch Tray] CPLD 0.1.0.6 (CPLD) subs=4 prod:` + swCPLD + `->"cpld"`,
		`POWERSHELF_GB200_DELTA [Power Shelf] PowerShelfFW PR-2025.03 (Powershelf FW) subs=4 prod:` + psu + `->""`,
		`compute_gb200_wiwynn [Compute Node] CX7 28.44.1036 (CX7) subs=0 `,
		`compute_gb200_wiwynn [Compute Node] BF3_BFB 4.10.0 (BF3_BFB) subs=0 `,
		`compute_gb200_wiwynn [Compute Node] BF3_NIC 32.44.1036 (BF3_NIC) subs=0 `,
		`compute_gb200_wiwynn [Compute Node] HMC GB200Nvl-25.03-6 (HMC) subs=2 prod:` + hmc + `->"/redfish/v1/Chassis/HGX_Chassis_0"`,
		`compute_gb200_wiwynn [Compute Node] BMC GB200Nvl-25.03-4 (BMC) subs=2 prod:` + bmc + `->"bmc"`,
		`image prod 25.02.2553 "NVOS 25.02.2553" ` + nvos + ` required=true`,
	}
	md := m.Metadata()
	// The SKUs route by their Type to every family's node types (see
	// route_test); the GB200 ones are spelt out, the others must match
	// them kind for kind.
	gb200 := manifest.Metadata{SwitchSystemImages: md.SwitchSystemImages}
	for _, dc := range md.DeviceComponents {
		if dc.NodeType.Family() == hw.FamilyGB200 {
			gb200.DeviceComponents = append(gb200.DeviceComponents, dc)
		}
	}
	if got := describe(gb200); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("metadata\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	byKind := map[hw.Kind]string{}
	for _, dc := range gb200.DeviceComponents {
		byKind[dc.NodeType.Kind()] = fmt.Sprint(dc.Components)
	}
	for _, dc := range md.DeviceComponents {
		if d := dc.Descriptor(); d[hw.AttrProductFamily] != strings.ToLower(string(dc.NodeType.Family())) {
			t.Errorf("%s: descriptor %v", dc.NodeType, d)
		}
		if got := fmt.Sprint(dc.Components); got != byKind[dc.NodeType.Kind()] {
			t.Errorf("%s components %s, want those of the GB200 %s", dc.NodeType, got, dc.NodeType.Kind())
		}
	}
	sub := md.DeviceComponents[1].Components[0].Subcomponents[0]
	if sub != (manifest.Subcomponent{Name: "PR1 PSU", Version: "C1.06", SKUID: "PR1"}) {
		t.Errorf("power shelf subcomponent %+v", sub)
	}
}

func TestParse_MultiPackageKeepsEveryPayloadForChosenNodeTypes(t *testing.T) {
	m := parseSample(t, manifest.Options{MultiPackage: []hw.NodeType{hw.PowerShelfGB200Liteon}})
	shelfFiles := func(nt hw.NodeType) []string {
		for _, dc := range m.Metadata().DeviceComponents {
			if dc.NodeType == nt {
				var out []string
				for _, a := range dc.Components[0].Artifacts {
					out = append(out, a.FileName)
				}
				return out
			}
		}
		t.Fatalf("no %s components", nt)
		return nil
	}
	if got := strings.Join(shelfFiles(hw.PowerShelfGB200Liteon), " "); got !=
		"liteon_psu_c1.06.tar nvidia_pmc_1.2.7.fwpkg delta_psu_d2.01.tar nvidia_pmc_1.2.7_pr3.fwpkg" {
		t.Errorf("LiteOn (multi-package) artifacts: %s", got)
	}
	if got := strings.Join(shelfFiles(hw.PowerShelfGB200Delta), " "); got != "liteon_psu_c1.06.tar" {
		t.Errorf("Delta (default) artifacts: %s", got)
	}
	if n := len(m.Artifacts()); n != 10 {
		t.Errorf("%d artifacts, want the 7 of the default plus 3 more shelf packages", n)
	}
}

func TestMetadata_ReturnsACopy(t *testing.T) {
	m := parseSample(t, manifest.Options{})
	md := m.Metadata()
	md.DeviceComponents[0].Components[3].Artifacts[0].FileName = "changed"
	md.DeviceComponents[0].Components[3].Subcomponents[0].Version = "changed"
	md.SwitchSystemImages[0].Version = "changed"
	arts := m.Artifacts()
	arts[0].Name = "changed"
	if again := strings.Join(describe(m.Metadata()), "\n"); strings.Contains(again, "changed") {
		t.Errorf("metadata shares memory with its caller:\n%s", again)
	}
	if m.Artifacts()[0].Name == "changed" {
		t.Error("artifacts share memory with their caller")
	}
}
