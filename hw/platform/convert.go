package platform

import (
	"github.com/rmsd/rmsd/hw/redfish"
)

func fromRedfishPower(s redfish.PowerState) PowerState {
	switch s {
	case redfish.PowerOn:
		return PowerStateOn
	case redfish.PowerOff:
		return PowerStateOff
	default:
		return PowerStateUnknown
	}
}

func fromRedfishInventory(inv redfish.Inventory) []Firmware {
	out := make([]Firmware, 0, len(inv.Components))
	for _, c := range inv.Components {
		out = append(out, Firmware{ID: c.ID, URI: c.URI, Version: c.Version, Updateable: c.Updateable,
			Health: healthOrUnknown(c.Health), Type: ClassifyFirmware(c.ID + " " + c.URI)})
	}
	return out
}

func fromRedfishTask(t redfish.Task) TaskStatus {
	return TaskStatus{
		ID: t.ID, Done: t.Terminal() || t.ResetHandoff,
		Failed:  (t.State == redfish.TaskFailed || t.State == redfish.TaskCancelled) && !t.ResetHandoff,
		State:   t.State.String(),
		Percent: t.Percent, Message: t.Message,
	}
}

func fromRedfishStart(s redfish.UpdateStart) UpdateStart {
	return UpdateStart{TaskID: s.TaskID, Skipped: s.Skipped, Reason: s.Reason}
}
