package sim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// shelfPowerLocked is the shelf's aggregate state: On when every PSU is on.
func (d *Device) shelfPowerLocked() string {
	for _, on := range d.state.psus {
		if !on {
			return stateOff
		}
	}
	return stateOn
}

// setPSUsLocked switches every PSU (a power-on does nothing while
// FailPowerOn is set) and tells the rack's power bus.
func (d *Device) setPSUsLocked(on bool) {
	if on && d.failPowerOn {
		d.log.Info().Msg("power-on accepted but ignored (fault)")
		return
	}
	for i := range d.state.psus {
		d.state.psus[i] = on
	}
	d.feedChangedLocked()
}

func (d *Device) getShelfChassis(w http.ResponseWriter, id string) {
	d.lockNow()
	power := d.shelfPowerLocked()
	d.mu.Unlock()
	base := "/redfish/v1/Chassis/" + id
	ch := obj{
		"@odata.id": base, "@odata.type": "#Chassis.v1_23_0.Chassis", "Id": id, "Name": "Power Shelf",
		"ChassisType": "Shelf", "SerialNumber": d.serial, "PowerState": power,
		"PowerSubsystem": ref(base + "/PowerSubsystem"),
		"Status":         obj{"State": "Enabled", "Health": "OK"},
	}
	if d.kind == kindShelfLiteOn {
		ch["Manufacturer"] = "LITEON"
		ch["Actions"] = obj{
			"#Chassis.On": obj{"target": base + "/Actions/Chassis.On",
				"@Redfish.ActionInfo": base + "/OnActionInfo"},
			"#Chassis.ForceOff": obj{"target": base + "/Actions/Chassis.ForceOff",
				"@Redfish.ActionInfo": base + "/ForceOffActionInfo"},
			"#Chassis.Reset": obj{"target": base + "/Actions/Chassis.Reset",
				"@Redfish.ActionInfo": base + "/ResetActionInfo"},
		}
	} else {
		ch["Manufacturer"] = "DELTA"
		ch["Oem"] = obj{"deltaenergysystems": obj{"ShelfType": "GB200 33kW"}}
	}
	writeJSON(w, http.StatusOK, ch)
}

// liteOnActionInfo describes the single parameter of each LiteOn action.
var liteOnActionInfo = map[string]struct {
	param   string
	allowed []string
}{
	"OnActionInfo":       {"OnType", []string{"On"}},
	"ForceOffActionInfo": {"ForceOffType", []string{"ForceOff"}},
	"ResetActionInfo":    {"ResetType", []string{"On", "ForceOff", "GracefulShutdown", "PowerCycle"}},
}

func (d *Device) getActionInfo(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("info")
	info, ok := liteOnActionInfo[name]
	if d.kind != kindShelfLiteOn || r.PathValue("id") != "powershelf" || !ok {
		notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id":   r.URL.Path,
		"@odata.type": "#ActionInfo.v1_3_0.ActionInfo",
		"Id":          name, "Name": name,
		"Parameters": []obj{{"Name": info.param, "Required": true, "DataType": "String",
			"AllowableValues": info.allowed}},
	})
}

// postChassisAction handles the LiteOn #Chassis.On/ForceOff/Reset actions;
// each demands the body its ActionInfo describes.
func (d *Device) postChassisAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	infoName := map[string]string{"Chassis.On": "OnActionInfo", "Chassis.ForceOff": "ForceOffActionInfo",
		"Chassis.Reset": "ResetActionInfo"}[action]
	if d.kind != kindShelfLiteOn || r.PathValue("id") != "powershelf" || infoName == "" {
		notFound(w, r)
		return
	}
	info := liteOnActionInfo[infoName]
	var body map[string]string
	if err := readJSON(r, &body); err != nil {
		badRequest(w, "malformed JSON body")
		return
	}
	v, ok := body[info.param]
	if !ok || !contains(info.allowed, v) || len(body) != 1 {
		writeError(w, http.StatusBadRequest, "Base.1.0.ActionParameterMissing",
			"The action "+action+" requires the parameter "+info.param+" with one of "+strings.Join(info.allowed, ", ")+".")
		return
	}
	d.lockNow()
	defer d.mu.Unlock()
	d.state.resets = append(d.state.resets, action+":"+v)
	switch v {
	case "On":
		d.setPSUsLocked(true)
	case "PowerCycle":
		// Off and straight back on: too short for the trays to discharge.
		d.setPSUsLocked(false)
		d.setPSUsLocked(true)
	default:
		d.setPSUsLocked(false)
	}
	w.WriteHeader(http.StatusNoContent)
}

func (d *Device) shelfChassisOK(w http.ResponseWriter, r *http.Request) bool {
	if !d.isShelf() || !contains(d.chassisIDs(), r.PathValue("id")) {
		notFound(w, r)
		return false
	}
	return true
}

func (d *Device) getPowerSubsystem(w http.ResponseWriter, r *http.Request) {
	if !d.shelfChassisOK(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id": r.URL.Path, "@odata.type": "#PowerSubsystem.v1_1_0.PowerSubsystem",
		"Id": "PowerSubsystem", "Name": "Power Subsystem",
		"PowerSupplies": ref(r.URL.Path + "/PowerSupplies"),
	})
}

func (d *Device) getPowerSupplies(w http.ResponseWriter, r *http.Request) {
	if !d.shelfChassisOK(w, r) {
		return
	}
	d.mu.Lock()
	n := len(d.state.psus)
	d.mu.Unlock()
	uris := make([]string, n)
	for i := range uris {
		uris[i] = r.URL.Path + "/PSU_" + strconv.Itoa(i)
	}
	writeJSON(w, http.StatusOK, collectionOf(r.URL.Path, "#PowerSupplyCollection.PowerSupplyCollection", "Power Supplies", uris))
}

func (d *Device) getPowerSupply(w http.ResponseWriter, r *http.Request) {
	if !d.shelfChassisOK(w, r) {
		return
	}
	n, err := strconv.Atoi(strings.TrimPrefix(r.PathValue("psu"), "PSU_"))
	d.lockNow()
	defer d.mu.Unlock()
	if err != nil || !strings.HasPrefix(r.PathValue("psu"), "PSU_") || n < 0 || n >= len(d.state.psus) {
		notFound(w, r)
		return
	}
	on := d.state.psus[n]
	state := stateOff
	if on {
		state = stateOn
	}
	id := "PSU_" + strconv.Itoa(n)
	psu := obj{
		"@odata.id": r.URL.Path, "@odata.type": "#PowerSupply.v1_5_0.PowerSupply", "Id": id, "Name": id,
		"PowerState": state, "Status": obj{"State": "Enabled", "Health": "OK"},
	}
	if c := d.state.components["FW_PSU_"+strconv.Itoa(n)]; c != nil {
		psu["FirmwareVersion"] = c.installed
	}
	if d.kind == kindShelfDelta {
		// Delta reports input presence in PowerState and the output state
		// in its OEM block; RMS must read the OEM value.
		psu["PowerState"] = stateOn
		psu["Oem"] = obj{"deltaenergysystems": obj{"Power": on}}
	}
	writeJSON(w, http.StatusOK, psu)
}

const deltaShelfURI = "/redfish/v1/PowerEquipment/PowerShelves/1"

func (d *Device) getPowerEquipment(w http.ResponseWriter, r *http.Request) {
	if d.kind != kindShelfDelta {
		notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, obj{"@odata.id": "/redfish/v1/PowerEquipment",
		"@odata.type": "#PowerEquipment.v1_2_0.PowerEquipment", "Id": "PowerEquipment", "Name": "Power Equipment",
		"PowerShelves": ref("/redfish/v1/PowerEquipment/PowerShelves")})
}

func (d *Device) getPowerShelves(w http.ResponseWriter, r *http.Request) {
	if d.kind != kindShelfDelta {
		notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, collectionOf("/redfish/v1/PowerEquipment/PowerShelves",
		"#PowerDistributionCollection.PowerDistributionCollection", "Power Shelves", []string{deltaShelfURI}))
}

func (d *Device) getPowerShelf(w http.ResponseWriter, r *http.Request) {
	if d.kind != kindShelfDelta || r.PathValue("id") != "1" {
		notFound(w, r)
		return
	}
	writeJSON(w, http.StatusOK, obj{
		"@odata.id": deltaShelfURI, "@odata.type": "#PowerDistribution.v1_3_0.PowerDistribution",
		"Id": "1", "Name": "Power Shelf", "EquipmentType": "PowerShelf", "Manufacturer": "DELTA",
		"Oem": obj{"deltaenergysystems": obj{"Actions": obj{
			"#PowerShelf.TurnOnPSUs":  obj{"target": deltaShelfURI + "/Actions/Oem/PowerShelf.TurnOnPSUs"},
			"#PowerShelf.TurnOffPSUs": obj{"target": deltaShelfURI + "/Actions/Oem/PowerShelf.TurnOffPSUs"},
		}}},
	})
}

func (d *Device) postPowerShelfAction(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if d.kind != kindShelfDelta || r.PathValue("id") != "1" ||
		(action != "PowerShelf.TurnOnPSUs" && action != "PowerShelf.TurnOffPSUs") {
		notFound(w, r)
		return
	}
	var body json.RawMessage
	if err := readJSON(r, &body); err != nil {
		badRequest(w, "malformed JSON body")
		return
	}
	d.lockNow()
	defer d.mu.Unlock()
	d.state.resets = append(d.state.resets, action)
	d.setPSUsLocked(action == "PowerShelf.TurnOnPSUs")
	w.WriteHeader(http.StatusNoContent)
}
