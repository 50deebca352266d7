package fwupdate

import (
	"errors"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw/platform"
)

// computeInventory is a compute tray's inventory as the adapter reports it.
func computeInventory() []platform.Firmware {
	entry := func(id, version string) platform.Firmware {
		uri := "/redfish/v1/UpdateService/FirmwareInventory/" + id
		return platform.Firmware{ID: id, URI: uri, Version: version, Type: platform.ClassifyFirmware(id + " " + uri)}
	}
	return []platform.Firmware{
		entry("FW_BMC_0", "BMC-1"), entry("FW_ERoT_BMC_0", "EROT-1"), entry("FW_UEFI_0", "UEFI-1"),
		entry("FW_CPLD_0", "CPLD-1"), entry("HGX_FW_BMC_0", "HMCBMC-1"), entry("HGX_FW_GPU_0", "GPU-1"),
	}
}

func ids(entries []platform.Firmware) string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.ID
	}
	return strings.Join(out, ",")
}

func TestEntriesFor(t *testing.T) {
	shelf := []platform.Firmware{{ID: "FW_PMC_0", Version: "1.2.3"}, {ID: "FW_PSU_0", Version: "C1.02"}}
	tests := []struct {
		name string
		give Target
		inv  []platform.Firmware
		want string
	}{
		{"identity by id, case-insensitive", Target{Component: "BMC", Target: "fw_uefi_0"}, computeInventory(), "FW_UEFI_0"},
		{"identity by uri", Target{Component: "X", Target: "/redfish/v1/UpdateService/FirmwareInventory/FW_CPLD_0"},
			computeInventory(), "FW_CPLD_0"},
		{"the component when the target names no entry: the tray's own BMC", Target{Component: "BMC", Target: "bmc"},
			computeInventory(), "FW_BMC_0"},
		{"the HMC is the HGX BMC", Target{Component: "HMC"}, computeInventory(), "HGX_FW_BMC_0"},
		{"BIOS is the UEFI", Target{Component: "BIOS"}, computeInventory(), "FW_UEFI_0"},
		{"a component the node does not have", Target{Component: "NIC"}, computeInventory(), ""},
		{"a power shelf's firmware is its controller's", Target{Component: "PowerShelfFW"}, shelf, "FW_PMC_0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ids(entriesFor(tt.give, tt.inv)); got != tt.want {
				t.Fatalf("entriesFor(%+v) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestRunsComparesVersionsCaseInsensitively(t *testing.T) {
	inv := computeInventory()
	tests := []struct {
		give    Target
		version string
		want    bool
	}{
		{Target{Component: "BMC"}, "bmc-1", true},
		{Target{Component: "BMC"}, "HMCBMC-1", false}, // the HMC's BMC is not the tray's
		{Target{Component: "BMC", Target: "FW_BMC_0"}, "HMCBMC-1", false},
		{Target{Component: "BIOS"}, "UEFI-2", false},
		{Target{Component: "NIC"}, "BMC-1", false},
	}
	for _, tt := range tests {
		if got := runs(entriesFor(tt.give, inv), tt.version); got != tt.want {
			t.Errorf("runs(%+v, %q) = %v, want %v", tt.give, tt.version, got, tt.want)
		}
	}
}

func TestCheckAPs(t *testing.T) {
	tests := []struct {
		name string
		give []string
		want string // "" = no error
	}{
		{"none expected", []string{}, ""},
		{"all present, any case", []string{"fw_bmc_0", "HGX_FW_GPU_0"}, ""},
		{"missing listed with what is present", []string{"FW_BMC_0", "FW_NIC_0", "FW_HBA_0"},
			"missing FW_NIC_0, FW_HBA_0; present FW_BMC_0, FW_CPLD_0, FW_ERoT_BMC_0, FW_UEFI_0, HGX_FW_BMC_0, HGX_FW_GPU_0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkAPs(tt.give, computeInventory())
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.want != "" && (!errors.Is(err, errInventoryMismatch) || !strings.HasSuffix(err.Error(), tt.want)):
				t.Fatalf("err = %v, want ...%s", err, tt.want)
			}
		})
	}
}
