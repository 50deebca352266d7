package manifest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// A board SKU routes by its Type alone, as upstream's
// lookup_key_from_board_type and node_types_for_device_type: the
// ProductName neither narrows it to a family nor has to name one.
func TestParse_RoutesBoardSKUsToNodeTypes(t *testing.T) {
	const url = "https://af.example.com/fw/pkg.fwpkg"
	const (
		allCompute = "COMPUTE_GB200_NVIDIA [Compute Node], COMPUTE_GB300_NVIDIA [Compute Node], COMPUTE_GB300_LENOVO [Compute Node], " +
			"COMPUTE_VRNVL72_NVIDIA [Compute Node], compute_gb200_wiwynn [Compute Node], compute_gb300_supermicro [Compute Node]"
		allSwitches = "SWITCH_GB200_NVIDIA [Switch Tray], SWITCH_GB300_NVIDIA [Switch Tray], SWITCH_VRNVL72_NVIDIA [Switch Tray]"
		allShelves  = "POWERSHELF_GB200_LITEON [Power Shelf], POWERSHELF_GB200_DELTA [Power Shelf], " +
			"POWERSHELF_GB300_LITEON [Power Shelf], POWERSHELF_GB300_DELTA [Power Shelf]"
	)
	tests := []struct {
		name      string
		product   string
		skuType   string
		component string
		// want is "<node type> [<device type>]" per group; the device type
		// is upstream's lookup key, whatever the SKU Type's spelling.
		want    string
		warning string
	}{
		{"compute: every compute node type, whatever the product", "DGXGB200", "Compute Node", "BMC", allCompute, ""},
		{"compute of another product", "DGXGB300", "Compute Node", "HMC", allCompute, ""},
		{"a product naming no family", "ACME-RACK-9000", "Compute Node", "BMC", allCompute, ""},
		{"Compute Tray, upstream's other spelling", "ACME-RACK-9000", "Compute Tray", "BMC", allCompute, ""},
		{"switch", "DGXGB200", "Switch Tray", "CPLD", allSwitches, ""},
		{"switch of a product naming no family", "ACME", "Switch Tray", "BMC+FPGA+EROT", allSwitches, ""},
		{"power shelf", "DGXGB200", "Power Shelf", "Powershelf FW", allShelves, ""},
		{"PowerShelf, upstream's other spelling", "VR-NVL72", "PowerShelf", "PowerShelf", allShelves, ""},
		{"shelf firmware under the compute SKU", "DGXGB300", "Compute Node", "Powershelf FW", allShelves, ""},
		{"VR compute by its legacy label", "VR-NVL72", "VRNVL72 Compute Node", "BMC", "COMPUTE_VRNVL72_NVIDIA [Compute Node]", ""},
		{"VR compute legacy label in another product", "DGXGB200", "VRNVL72 Compute Node", "BMC", "COMPUTE_VRNVL72_NVIDIA [Compute Node]", ""},
		{"VR has no power shelf type", "VR-NVL72", "VRNVL72 Compute Node", "Powershelf FW", "",
			`component "Powershelf FW" of board SKU "VRNVL72 Compute Node SKU" applies to no node type (VRNVL72 has no power_shelf)`},
		{"case and spacing of the SKU Type", "DGXGB200", "switch-tray", "CPLD", allSwitches, ""},
		{"unknown SKU Type", "DGXGB200", "Cable Cartridge", "CPLD", "",
			`board SKU "Cable Cartridge SKU" has Type "Cable Cartridge", which routes to no node type`},
		{"no SKU Type", "DGXGB200", "", "CPLD", "", `has Type "", which routes to no node type`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := manifest.Parse(doc(t, tt.product, sku(tt.skuType, entry(tt.component, payload(url)))), manifest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, dc := range m.Metadata().DeviceComponents {
				got = append(got, fmt.Sprintf("%s [%s]", dc.NodeType, dc.DeviceType))
			}
			if strings.Join(got, ", ") != tt.want {
				t.Errorf("routed to %q, want %q", strings.Join(got, ", "), tt.want)
			}
			warnings := strings.Join(m.Warnings, "\n")
			if (tt.warning == "") != (warnings == "") || !strings.Contains(warnings, tt.warning) {
				t.Errorf("warnings %q, want %q", warnings, tt.warning)
			}
			if wantArtifacts := len(got) > 0; wantArtifacts != (len(m.Artifacts()) == 1) {
				t.Errorf("artifacts %+v for routes %v", m.Artifacts(), got)
			}
		})
	}
}

func TestParse_NormalisesComponentsAndTargets(t *testing.T) {
	tests := []struct {
		skuType, component string
		wantName, target   string
	}{
		{"Switch Tray", "BMC+FPGA+EROT", "BMC", "bmc"},
		{"Switch Tray", "SBIOS+EROT", "BIOS", "bios"},
		{"Switch Tray", "CPLD", "CPLD", "cpld"},
		{"Switch Tray", "Transceiver", "Transceiver", ""},
		{"Compute Node", "BMC", "BMC", "bmc"},
		{"Compute Node", "HMC", "HMC", "/redfish/v1/Chassis/HGX_Chassis_0"},
		{"Compute Node", "SBIOS", "BIOS", ""},
		{"Compute Node", "CPLD", "CPLD", ""},
		{"Compute Node", "BF3_NIC", "BF3_NIC", "BF3_NIC"},
		{"Compute Node", "cx7", "CX7", "CX7"},
		{"Power Shelf", "Powershelf FW", "PowerShelfFW", ""},
		{"Power Shelf", "PMC", "PMC", ""},
	}
	for _, tt := range tests {
		t.Run(tt.skuType+"/"+tt.component, func(t *testing.T) {
			m, err := manifest.Parse(doc(t, "DGXGB200", sku(tt.skuType, entry(tt.component, payload("https://af.example.com/p.fwpkg")))), manifest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := m.Metadata().DeviceComponents[0].Components[0]
			if c.Name != tt.wantName || c.SourceComponent != tt.component || c.Artifacts[0].Target != tt.target {
				t.Errorf("name %q source %q target %q; want %q, %q", c.Name, c.SourceComponent, c.Artifacts[0].Target, tt.wantName, tt.target)
			}
		})
	}
}

func TestParse_ChannelsOfOneComponentShareItsEntry(t *testing.T) {
	prod := entry("CPLD", payload("https://af.example.com/cpld-prod.fwpkg"))
	dev := entry("CPLD", payload("https://af.example.com/cpld-dev.fwpkg"))
	dev["Type"], dev["Version"] = "Dev", "2.0"
	m, err := manifest.Parse(doc(t, "DGXGB200", sku("Switch Tray", prod, dev)), manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	comps := m.Metadata().DeviceComponents[0].Components
	if len(comps) != 1 {
		t.Fatalf("%d components, want one CPLD", len(comps))
	}
	got := fmt.Sprint(comps[0].Artifacts)
	if want := "[{prod cpld-prod.fwpkg cpld } {dev cpld-dev.fwpkg cpld }]"; got != want || comps[0].Version != "1.0" {
		t.Errorf("artifacts %s version %s; want %s, the first entry's version", got, comps[0].Version, want)
	}
}

func TestParse_SharedPayloadIsDownloadedOnce(t *testing.T) {
	same := payload("https://af.example.com/shared/erot.fwpkg")
	m, err := manifest.Parse(doc(t, "DGXGB200", sku("Switch Tray", entry("EROT", same), entry("FPGA", same))), manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.Artifacts()); n != 1 {
		t.Errorf("%d artifacts, want 1", n)
	}
	for _, c := range m.Metadata().DeviceComponents[0].Components {
		if len(c.Artifacts) != 1 || c.Artifacts[0].FileName != "erot.fwpkg" {
			t.Errorf("%s: %+v", c.Name, c.Artifacts)
		}
	}
	if h := hw.SwitchGB200Nvidia; m.Metadata().DeviceComponents[0].NodeType != h {
		t.Errorf("node type %s", m.Metadata().DeviceComponents[0].NodeType)
	}
}
