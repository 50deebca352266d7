package sim

import (
	"net/http"
	"time"
)

// newMux builds the Redfish router shared by every device of a fleet; each
// handler finds its device in the request context and answers 404 for
// resources its kind does not have.
func newMux() *http.ServeMux {
	mux := http.NewServeMux()
	on(mux, "GET /redfish/v1", (*Device).getRoot)
	on(mux, "GET /redfish/v1/Systems", (*Device).getSystems)
	on(mux, "GET /redfish/v1/Systems/{id}", (*Device).getSystem)
	on(mux, "POST /redfish/v1/Systems/{id}/Actions/ComputerSystem.Reset", (*Device).postSystemReset)
	on(mux, "GET /redfish/v1/Systems/{id}/Processors", (*Device).getProcessors)
	on(mux, "GET /redfish/v1/Systems/{id}/Processors/{pid}", (*Device).getProcessor)
	on(mux, "GET /redfish/v1/Managers", (*Device).getManagers)
	on(mux, "GET /redfish/v1/Managers/{id}", (*Device).getManager)
	on(mux, "POST /redfish/v1/Managers/{id}/Actions/Manager.Reset", (*Device).postManagerReset)
	on(mux, "GET /redfish/v1/Chassis", (*Device).getChassisCollection)
	on(mux, "GET /redfish/v1/Chassis/{id}", (*Device).getChassis)
	on(mux, "POST /redfish/v1/Chassis/{id}/Actions/Oem/NvidiaChassis.AuxPowerReset", (*Device).postAuxPowerReset)
	on(mux, "GET /redfish/v1/Chassis/{id}/{info}", (*Device).getActionInfo)
	on(mux, "POST /redfish/v1/Chassis/{id}/Actions/{action}", (*Device).postChassisAction)
	on(mux, "GET /redfish/v1/Chassis/{id}/PowerSubsystem", (*Device).getPowerSubsystem)
	on(mux, "GET /redfish/v1/Chassis/{id}/PowerSubsystem/PowerSupplies", (*Device).getPowerSupplies)
	on(mux, "GET /redfish/v1/Chassis/{id}/PowerSubsystem/PowerSupplies/{psu}", (*Device).getPowerSupply)
	on(mux, "GET /redfish/v1/PowerEquipment", (*Device).getPowerEquipment)
	on(mux, "GET /redfish/v1/PowerEquipment/PowerShelves", (*Device).getPowerShelves)
	on(mux, "GET /redfish/v1/PowerEquipment/PowerShelves/{id}", (*Device).getPowerShelf)
	on(mux, "POST /redfish/v1/PowerEquipment/PowerShelves/{id}/Actions/Oem/{action}", (*Device).postPowerShelfAction)
	on(mux, "GET /redfish/v1/UpdateService", (*Device).getUpdateService)
	on(mux, "PATCH /redfish/v1/UpdateService", (*Device).patchUpdateService)
	on(mux, "GET /redfish/v1/UpdateService/FirmwareInventory", (*Device).getInventory)
	on(mux, "GET /redfish/v1/UpdateService/FirmwareInventory/{id}", (*Device).getInventoryItem)
	on(mux, "POST /redfish/v1/UpdateService/update-multipart", (*Device).postMultipart)
	on(mux, "POST /redfish/v1/UpdateService/update", (*Device).postRawPush)
	on(mux, "GET /redfish/v1/TaskService", (*Device).getTaskService)
	on(mux, "GET /redfish/v1/TaskService/Tasks", (*Device).getTasks)
	on(mux, "GET /redfish/v1/TaskService/Tasks/{id}", (*Device).getTask)
	mux.HandleFunc("/", notFound)
	return mux
}

// lockNow takes d.mu and settles state to now; callers defer d.mu.Unlock.
func (d *Device) lockNow() time.Time {
	d.mu.Lock()
	now := time.Now()
	d.settleLocked(now)
	return now
}

func (d *Device) isShelf() bool { return d.kind == kindShelfLiteOn || d.kind == kindShelfDelta }

func (d *Device) getRoot(w http.ResponseWriter, _ *http.Request) {
	root := obj{
		"@odata.id": "/redfish/v1", "@odata.type": "#ServiceRoot.v1_15_0.ServiceRoot",
		"Id": "RootService", "Name": "Root Service", "RedfishVersion": "1.17.0",
		"UUID":          "00000000-0000-4000-8000-" + d.macHex(),
		"Chassis":       ref("/redfish/v1/Chassis"),
		"Managers":      ref("/redfish/v1/Managers"),
		"UpdateService": ref("/redfish/v1/UpdateService"),
		"TaskService":   ref("/redfish/v1/TaskService"),
	}
	if d.isShelf() {
		root["PowerEquipment"] = ref("/redfish/v1/PowerEquipment")
	} else {
		root["Systems"] = ref("/redfish/v1/Systems")
	}
	writeJSON(w, http.StatusOK, root)
}

func (d *Device) macHex() string {
	out := make([]byte, 0, 12)
	for i := 0; i < len(d.mac); i++ {
		if d.mac[i] != ':' {
			out = append(out, d.mac[i])
		}
	}
	return string(out)
}

// managerIDs lists the managers of the device.
func (d *Device) managerIDs() []string {
	if d.kind == kindCompute {
		return []string{"BMC_0", "HGX_BMC_0"}
	}
	return []string{"BMC_0"}
}

func (d *Device) getManagers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, collectionOfIDs("/redfish/v1/Managers", "#ManagerCollection.ManagerCollection", "Manager Collection", d.managerIDs()))
}

func (d *Device) getManager(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !contains(d.managerIDs(), id) {
		notFound(w, r)
		return
	}
	base := "/redfish/v1/Managers/" + id
	d.lockNow()
	fwID := "FW_BMC_0"
	if d.isShelf() {
		fwID = "FW_PMC_0"
	}
	fw := d.state.components[fwID]
	version := ""
	if fw != nil {
		version = fw.installed
	}
	d.mu.Unlock()
	writeJSON(w, http.StatusOK, obj{
		"@odata.id": base, "@odata.type": "#Manager.v1_19_0.Manager", "Id": id, "Name": id,
		"ManagerType": "BMC", "FirmwareVersion": version, "Status": obj{"State": "Enabled", "Health": "OK"},
		"Actions": obj{"#Manager.Reset": obj{
			"target":                            base + "/Actions/Manager.Reset",
			"ResetType@Redfish.AllowableValues": []string{"GracefulRestart", "ForceRestart"},
		}},
	})
}

func (d *Device) postManagerReset(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !contains(d.managerIDs(), id) {
		notFound(w, r)
		return
	}
	var body struct{ ResetType string }
	if err := readJSON(r, &body); err != nil {
		badRequest(w, "malformed JSON body")
		return
	}
	if body.ResetType != "GracefulRestart" && body.ResetType != "ForceRestart" {
		badRequest(w, "ResetType "+body.ResetType+" is not supported by Manager.Reset")
		return
	}
	d.lockNow()
	defer d.mu.Unlock()
	d.state.resets = append(d.state.resets, id+":"+body.ResetType)
	switch {
	case id == "HGX_BMC_0":
		// The HMC restarts behind the BMC; the BMC keeps answering.
	case d.isShelf():
		d.rebootLocked(d.opts.scale(d.opts.Timing.ResetDelay), d.opts.scale(d.opts.Timing.ShelfReboot),
			func() { d.activateLocked(nil) })
	default:
		d.rebootLocked(d.opts.scale(d.opts.Timing.ResetDelay), d.opts.scale(d.opts.Timing.BMCReboot),
			func() { d.activateLocked(d.bmcResetComponentsLocked()) })
	}
	w.WriteHeader(http.StatusNoContent)
}

// bmcResetComponentsLocked lists the components a BMC restart activates.
func (d *Device) bmcResetComponentsLocked() []string {
	if d.kind == kindSwitchBMC {
		return nil // a switch BMC restart activates everything it staged
	}
	return []string{"FW_BMC_0", "FW_ERoT_BMC_0"}
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
