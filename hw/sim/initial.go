package sim

import (
	"strconv"
)

// initState gives a device its power-on state and firmware.
func (d *Device) initState() {
	s := &d.state
	s.components = map[string]*component{}
	s.tasks = map[string]*task{}
	s.power = stateOn
	switch d.kind {
	case kindCompute:
		s.addComponent("FW_BMC_0", "BMC firmware", "GB200Nvl-BMC", "GB200Nvl-25.06-3")
		s.addComponent("FW_ERoT_BMC_0", "BMC ERoT firmware", "ERoT-BMC", "01.04.0031.0000_n04")
		s.addComponent("FW_UEFI_0", "Grace UEFI firmware", "UEFI", "01.04.09")
		s.addComponent("FW_CPLD_0", "Tray CPLD", "CPLD", "0.1.0.8")
		s.addComponent("HGX_FW_BMC_0", "HMC firmware", "HGX-HMC", "GB200Nvl-25.06-4")
		s.addComponent("HGX_FW_ERoT_BMC_0", "HMC ERoT firmware", "ERoT-HMC", "01.04.0031.0000_n04")
		for i := 0; i < 4; i++ {
			s.addComponent("HGX_FW_GPU_"+strconv.Itoa(i), "GPU "+strconv.Itoa(i)+" firmware", "GPU", "97.00.82.00.0A")
		}
	case kindSwitchBMC:
		s.addComponent("FW_BMC_0", "Switch BMC firmware", "NVSwitch-BMC", "88.0002.1240")
		s.addComponent("FW_ERoT_BMC_0", "Switch BMC ERoT firmware", "ERoT-BMC", "01.04.0031.0000_n04")
		s.addComponent("FW_CPLD_0", "Switch tray CPLD", "CPLD", "0.1.0.5")
	case kindShelfLiteOn, kindShelfDelta:
		s.applyTime = "Immediate"
		s.psus = make([]bool, 6)
		for i := range s.psus {
			s.psus[i] = true
		}
		s.addComponent("FW_PMC_0", "PMC firmware", "PMC", "1.2.3")
		for i := range s.psus {
			s.addComponent("FW_PSU_"+strconv.Itoa(i), "PSU "+strconv.Itoa(i)+" firmware", "PSU", "C1.02")
		}
	}
}
