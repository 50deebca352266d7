package platform_test

import (
	"testing"

	"github.com/rmsd/rmsd/hw/platform"
)

func TestClassifyFirmware(t *testing.T) {
	inv := "/redfish/v1/UpdateService/FirmwareInventory/"
	tests := []struct {
		give string
		want platform.FirmwareType
	}{
		{"FW_BMC_0 " + inv + "FW_BMC_0", platform.FirmwareBMC},
		{"FW_ERoT_BMC_0 " + inv + "FW_ERoT_BMC_0", platform.FirmwareBMC},
		{"HGX_FW_BMC_0 " + inv + "HGX_FW_BMC_0", platform.FirmwareBMC}, // bmc is tried before hgx
		{"FW_UEFI_0 " + inv + "FW_UEFI_0", platform.FirmwareBIOS},
		{"HGX_FW_SBIOS_0", platform.FirmwareBIOS},
		{"FW_CPLD_0 " + inv + "FW_CPLD_0", platform.FirmwareCPLD},
		{"FW_FPGA_0", platform.FirmwareFPGA},
		{"HGX_FW_SMR_0", platform.FirmwareFPGA}, // smr is tried before hgx
		{"FW_NIC_0", platform.FirmwareNIC},
		{"FW_HBA_0", platform.FirmwareHBA},
		{"HGX_FW_GPU_0 " + inv + "HGX_FW_GPU_0", platform.FirmwareHMC},
		{"HMC_Firmware", platform.FirmwareHMC},
		{"FW_PMC_0 " + inv + "FW_PMC_0", platform.FirmwareUnknown},
		{"FW_PSU_3 " + inv + "FW_PSU_3", platform.FirmwareUnknown},
		{"BMC", platform.FirmwareBMC},
		{"BIOS", platform.FirmwareBIOS},
		{"CPLD1", platform.FirmwareCPLD},
		{"FPGA", platform.FirmwareFPGA},
		{"EROT", platform.FirmwareUnknown},
		{"", platform.FirmwareUnknown},
	}
	for _, tt := range tests {
		if got := platform.ClassifyFirmware(tt.give); got != tt.want {
			t.Errorf("ClassifyFirmware(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
