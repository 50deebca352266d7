package compare_test

import (
	"os"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/compare"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/firmware/selector"
	"github.com/rmsd/rmsd/hw/platform"
)

// sampleComponents are the components the GB200 sample manifest gives
// node type t, opt-in NICs included, by name.
func sampleComponents(t *testing.T, nt hw.NodeType) map[string]manifest.Component {
	t.Helper()
	b, err := os.ReadFile("../manifest/testdata/dgxgb200_1.3.6.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(b, manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := selector.NewFilters(map[hw.NodeType][]string{nt: {}}, nil, nil)
	comps, _ := selector.Components(m.Metadata(), nt, f, "prod")
	nics, _ := selector.Components(m.Metadata(), nt, selector.NewFilters(map[hw.NodeType][]string{nt: {"CX7", "BF3_NIC"}}, nil, nil), "prod")
	out := map[string]manifest.Component{}
	for _, c := range append(comps, nics...) {
		out[c.Name] = c
	}
	return out
}

// redfish is a Redfish inventory of the given ids and versions, typed as
// the platform types them.
func redfish(idVersions ...string) []platform.Firmware {
	var out []platform.Firmware
	for i := 0; i+1 < len(idVersions); i += 2 {
		id := idVersions[i]
		uri := "/redfish/v1/UpdateService/FirmwareInventory/" + id
		out = append(out, platform.Firmware{ID: id, URI: uri, Version: idVersions[i+1], Type: platform.ClassifyFirmware(id + " " + uri)})
	}
	return out
}

// nvue is a switch's NVUE inventory.
func nvue(idVersions ...string) []platform.Firmware {
	var out []platform.Firmware
	for i := 0; i+1 < len(idVersions); i += 2 {
		out = append(out, platform.Firmware{ID: idVersions[i], Version: idVersions[i+1], Type: platform.ClassifyFirmware(idVersions[i])})
	}
	return out
}

// computeTray is a GB200 compute tray's inventory as the simulator and the
// hardware list it: the tray's BMC and its ERoT, UEFI, CPLD, then the HMC
// (HGX_FW_BMC_0), its ERoT and the GPUs.
var computeTray = redfish("FW_ERoT_BMC_0", "01.04.0031.0000_n04", "HGX_FW_BMC_0", "GB200Nvl-25.03-6", "FW_BMC_0", "GB200Nvl-25.03-4",
	"FW_UEFI_0", "01.04.09", "FW_CPLD_0", "0.1.0.8", "HGX_FW_ERoT_BMC_0", "01.04.0031.0000_n04", "HGX_FW_GPU_0", "97.00.82.00.0A")

func TestFindOnAComputeTray(t *testing.T) {
	comps := sampleComponents(t, hw.ComputeGB200Nvidia)
	for name, want := range map[string]string{"BMC": "FW_BMC_0", "HMC": "HGX_FW_BMC_0"} {
		fw, ok := compare.Find(comps[name], computeTray)
		if !ok || fw.ID != want {
			t.Errorf("%s found %q (%v), want %s", name, fw.ID, ok, want)
		}
	}
	// The kinds the sample does not give a compute tray, and a name the
	// rule does not know, looked for as a word of its own.
	for name, want := range map[string]string{"BIOS": "FW_UEFI_0", "CPLD": "FW_CPLD_0", "EROT": "FW_ERoT_BMC_0", "GPU": "HGX_FW_GPU_0"} {
		fw, ok := compare.Find(manifest.Component{Name: name}, computeTray)
		if !ok || fw.ID != want {
			t.Errorf("%s found %q (%v), want %s", name, fw.ID, ok, want)
		}
	}
	for _, name := range []string{"CX7", "BF3_NIC"} {
		if fw, ok := compare.Find(comps[name], computeTray); ok {
			t.Errorf("%s found %s on a tray that lists no NIC", name, fw.ID)
		}
	}
}

func TestFindOnASwitch(t *testing.T) {
	inv := nvue("BMC", "88.0002.1950", "EROT", "01.04.0008.0000", "FPGA", "0.1C", "BIOS", "0ACTV_00.01.015", "CPLD1", "CPLD000133_REV3100")
	comps := sampleComponents(t, hw.SwitchGB200Nvidia)
	// BMC+FPGA+EROT and SBIOS+EROT by their artifacts' targets (bmc,
	// bios), CPLD by its word.
	for name, want := range map[string]string{"BMC": "BMC", "BIOS": "BIOS", "CPLD": "CPLD1"} {
		fw, ok := compare.Find(comps[name], inv)
		if !ok || fw.ID != want {
			t.Errorf("%s found %q (%v), want %s", name, fw.ID, ok, want)
		}
	}
	for _, name := range []string{"FPGA", "EROT"} {
		if fw, ok := compare.Find(manifest.Component{Name: name}, inv); !ok || fw.ID != name {
			t.Errorf("%s found %q (%v)", name, fw.ID, ok)
		}
	}
}

func TestFindOnAPowerShelf(t *testing.T) {
	inv := redfish("FW_PSU_0", "C1.02", "FW_PMC_0", "1.2.3", "FW_PSU_1", "C1.02")
	comps := sampleComponents(t, hw.PowerShelfGB200Liteon)
	if fw, ok := compare.Find(comps["PowerShelfFW"], inv); !ok || fw.ID != "FW_PMC_0" {
		t.Errorf("PowerShelfFW found %q (%v), want the shelf manager's FW_PMC_0", fw.ID, ok)
	}
}

// The rules in order: an artifact's target names an entry by URI or id
// before the names and words do.
func TestFindRuleOrder(t *testing.T) {
	inv := redfish("FW_BMC_0", "1", "BMC", "2", "Special_Blob_7", "3")
	byTarget := manifest.Component{Name: "BMC", Artifacts: []manifest.ComponentArtifact{{Target: "/redfish/v1/UpdateService/FirmwareInventory/Special_Blob_7"}}}
	if fw, _ := compare.Find(byTarget, inv); fw.ID != "Special_Blob_7" {
		t.Errorf("by target URI: %s", fw.ID)
	}
	if fw, _ := compare.Find(manifest.Component{Name: "BMC", Artifacts: []manifest.ComponentArtifact{{Target: "special_blob_7"}}}, inv); fw.ID != "Special_Blob_7" {
		t.Errorf("by target id: %s", fw.ID)
	}
	// The name rule beats the words: BMC is the entry named BMC.
	if fw, _ := compare.Find(manifest.Component{Name: "BMC"}, inv); fw.ID != "BMC" {
		t.Errorf("by name: %s", fw.ID)
	}
	if fw, _ := compare.Find(manifest.Component{Name: "Other", SourceComponent: "special-blob+7"}, inv); fw.ID != "Special_Blob_7" {
		t.Errorf("by label: %s", fw.ID)
	}
	// A word is a whole word, or the word and digits: BM is not BMC, and
	// CPLDX is not a CPLD.
	if fw, ok := compare.Find(manifest.Component{Name: "BM"}, inv); ok {
		t.Errorf("BM found %s", fw.ID)
	}
	if fw, ok := compare.Find(manifest.Component{Name: "CPLD"}, nvue("CPLDX", "1")); ok {
		t.Errorf("CPLD found %s", fw.ID)
	}
	if _, ok := compare.Find(manifest.Component{}, inv); ok {
		t.Error("a component without a name found an entry")
	}
}
