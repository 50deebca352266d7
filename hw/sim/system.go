package sim

import (
	"net/http"
)

// resetTypes lists the ResetType values System_0 accepts.
func (d *Device) resetTypes() []string {
	types := []string{"On", "ForceOn", "ForceOff", "GracefulShutdown", "GracefulRestart", "ForceRestart", "PowerCycle"}
	if d.kind == kindCompute {
		types = append(types, "Nmi")
	}
	return types
}

const systemID = "System_0"

func (d *Device) hasSystem(w http.ResponseWriter, r *http.Request) bool {
	if d.isShelf() || r.PathValue("id") != systemID {
		notFound(w, r)
		return false
	}
	return true
}

func (d *Device) getSystems(w http.ResponseWriter, r *http.Request) {
	if d.isShelf() {
		notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, collectionOf("/redfish/v1/Systems", "#ComputerSystemCollection.ComputerSystemCollection",
		"Computer System Collection", []string{"/redfish/v1/Systems/" + systemID}))
}

func (d *Device) getSystem(w http.ResponseWriter, r *http.Request) {
	if !d.hasSystem(w, r) {
		return
	}
	d.lockNow()
	power := d.state.power
	d.mu.Unlock()
	base := "/redfish/v1/Systems/" + systemID
	sys := obj{
		"@odata.id": base, "@odata.type": "#ComputerSystem.v1_20_0.ComputerSystem",
		"Id": systemID, "Name": systemID, "SystemType": "Physical",
		"Manufacturer": "NVIDIA", "Model": d.typ.Name(), "SerialNumber": d.serial,
		"PowerState": power, "Status": obj{"State": "Enabled", "Health": "OK"},
		"Actions": obj{"#ComputerSystem.Reset": obj{
			"target":                            base + "/Actions/ComputerSystem.Reset",
			"ResetType@Redfish.AllowableValues": d.resetTypes(),
		}},
	}
	if d.kind == kindCompute {
		sys["Processors"] = ref(base + "/Processors")
	}
	writeJSON(w, http.StatusOK, sys)
}

func (d *Device) postSystemReset(w http.ResponseWriter, r *http.Request) {
	if !d.hasSystem(w, r) {
		return
	}
	var body struct{ ResetType string }
	if err := readJSON(r, &body); err != nil {
		badRequest(w, "malformed JSON body")
		return
	}
	if !contains(d.resetTypes(), body.ResetType) {
		writeError(w, http.StatusBadRequest, "Base.1.0.ActionParameterValueNotInList",
			"The value "+body.ResetType+" for the parameter ResetType is not in the list of acceptable values.")
		return
	}
	now := d.lockNow()
	defer d.mu.Unlock()
	d.state.resets = append(d.state.resets, body.ResetType)
	tr := d.opts.scale(d.opts.Timing.PowerTransition)
	switch body.ResetType {
	case "On", "ForceOn":
		d.setPowerLocked(now, stateOn, tr)
	case "GracefulShutdown":
		d.setPowerLocked(now, stateOff, tr)
	case "ForceOff":
		d.setPowerLocked(now, stateOff, 0)
	case "GracefulRestart", "ForceRestart", "PowerCycle":
		d.state.power = statePoweringOn
		d.state.powerTarget, d.state.powerAt = stateOn, now.Add(tr)
		if d.kind == kindSwitchBMC && d.host != nil {
			d.host.PowerCycle(d.opts.scale(d.opts.Timing.HostReboot))
		}
	case "Nmi":
		// Diagnostic interrupt: recorded, no power change.
	}
	d.log.Info().Str("reset", body.ResetType).Msg("system reset")
	w.WriteHeader(http.StatusNoContent)
}

func (d *Device) getProcessors(w http.ResponseWriter, r *http.Request) {
	if d.kind != kindCompute || r.PathValue("id") != systemID {
		notFound(w, r)
		return
	}
	base := "/redfish/v1/Systems/" + systemID + "/Processors"
	writeJSON(w, http.StatusOK, collectionOf(base, "#ProcessorCollection.ProcessorCollection", "Processors",
		[]string{base + "/CPU_0", base + "/CPU_1"}))
}

func (d *Device) getProcessor(w http.ResponseWriter, r *http.Request) {
	pid := r.PathValue("pid")
	if d.kind != kindCompute || r.PathValue("id") != systemID || (pid != "CPU_0" && pid != "CPU_1") {
		notFound(w, r)
		return
	}
	topo := obj{
		"ChassisSerialNumber": d.rackSerial(),
		"TraySlotNumber":      d.slot,
		"TraySlotIndex":       d.index,
	}
	d.mu.Lock()
	for key, raw := range d.topology {
		if len(raw) == 0 {
			delete(topo, key)
		} else {
			topo[key] = raw
		}
	}
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":     "/redfish/v1/Systems/" + systemID + "/Processors/" + pid,
		"@odata.type":   "#Processor.v1_20_0.Processor",
		"Id":            pid,
		"Name":          pid,
		"ProcessorType": "CPU",
		"Manufacturer":  "NVIDIA",
		"Model":         "Grace A02P",
		"Status":        obj{"State": "Enabled", "Health": "OK"},
		"Oem": obj{"Nvidia": obj{
			"@odata.type":      "#NvidiaProcessor.v1_4_0.NvidiaProcessor",
			"MNNVLinkTopology": topo,
		}},
	})
}

// rackSerial is the serial number of the rack chassis the tray sits in.
// rackSerial is the rack chassis serial number: numeric, as real GB200
// chassis serials are (the wire carries it as an int64).
func (d *Device) rackSerial() string { return "1820000" + d.rackID[len(d.rackID)-3:] }

// chassisIDs lists the chassis of the device.
func (d *Device) chassisIDs() []string {
	switch d.kind {
	case kindCompute:
		return []string{"Chassis_0", "HGX_Chassis_0"}
	case kindSwitchBMC:
		return []string{"Chassis_0"}
	case kindShelfLiteOn:
		return []string{"powershelf"}
	default:
		return []string{"chassis"}
	}
}

func (d *Device) getChassisCollection(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, collectionOfIDs("/redfish/v1/Chassis", "#ChassisCollection.ChassisCollection", "Chassis Collection", d.chassisIDs()))
}

func (d *Device) getChassis(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !contains(d.chassisIDs(), id) {
		notFound(w, r)
		return
	}
	if d.isShelf() {
		d.getShelfChassis(w, id)
		return
	}
	base := "/redfish/v1/Chassis/" + id
	ch := obj{
		"@odata.id": base, "@odata.type": "#Chassis.v1_23_0.Chassis", "Id": id, "Name": id,
		"ChassisType": "Module", "Manufacturer": "NVIDIA", "SerialNumber": d.serial,
		"Status": obj{"State": "Enabled", "Health": "OK"},
	}
	if id == "Chassis_0" {
		d.mu.Lock()
		wp, bg := d.wp, d.bgCopy
		d.mu.Unlock()
		if bg == "" {
			bg = "Completed"
		}
		ch["Oem"] = obj{"Nvidia": obj{"HardwareWriteProtectEnable": wp, "BackgroundCopyStatus": bg}}
		if d.kind == kindCompute {
			ch["Actions"] = obj{"Oem": obj{"#NvidiaChassis.AuxPowerReset": obj{
				"target":                            base + "/Actions/Oem/NvidiaChassis.AuxPowerReset",
				"ResetType@Redfish.AllowableValues": []string{"AuxPowerCycle"},
			}}}
		}
	}
	writeJSON(w, http.StatusOK, ch)
}

// postAuxPowerReset cycles the tray's auxiliary power: the host goes off,
// the BMC reboots and everything staged becomes active when it is back.
func (d *Device) postAuxPowerReset(w http.ResponseWriter, r *http.Request) {
	if d.kind != kindCompute || r.PathValue("id") != "Chassis_0" {
		notFound(w, r)
		return
	}
	var body struct{ ResetType string }
	if err := readJSON(r, &body); err != nil || body.ResetType != "AuxPowerCycle" {
		badRequest(w, "ResetType must be AuxPowerCycle")
		return
	}
	now := d.lockNow()
	defer d.mu.Unlock()
	d.state.resets = append(d.state.resets, "AuxPowerCycle")
	d.setPowerLocked(now, stateOff, 0)
	d.rebootLocked(d.opts.scale(d.opts.Timing.ResetDelay), d.opts.scale(d.opts.Timing.BMCReboot),
		func() { d.activateLocked(nil) })
	d.log.Info().Msg("aux power cycle")
	w.WriteHeader(http.StatusNoContent)
}
