package fabric

import (
	"context"

	"github.com/rmsd/rmsd/hw/nmxc/nmxcpb"
)

// Health of one sampled fabric indicator.
const (
	HealthUnknown  = "unknown"
	HealthHealthy  = "healthy"
	HealthDegraded = "degraded"
)

// Sample is what one controller reports of its fabric through the NMX-C
// inspection reads (GetDomainStateInfo, GetTopologyInfo,
// GetComputeNodeInfoList, GetSwitchNodeInfoList). Each read keeps its own
// error: a failed read leaves its part empty.
type Sample struct {
	ControlPlane     string // CONTROL_PLANE_STATE_*
	ControllerHealth string // Health*
	DomainErr        error

	Devices     []Device
	Ports       []Port
	TopologyErr error

	Computes    []Member
	ComputesErr error
	Switches    []Member
	SwitchesErr error
}

// Device is one GPU or switch ASIC of the fabric.
type Device struct {
	ID     string
	Type   string // GPU | SWITCH
	Health string
}

// Port is one NVLink port.
type Port struct {
	DeviceID string
	AdminUp  bool
	OperUp   bool
}

// Member is a compute or switch tray the controller sees, by physical
// identity.
type Member struct {
	ChassisSerial string
	SlotNumber    int64
	TrayIndex     int64
	Health        string
}

func healthOf(h nmxcpb.Health) string {
	switch h {
	case nmxcpb.Health_NMX_HEALTH_HEALTHY:
		return HealthHealthy
	case nmxcpb.Health_NMX_HEALTH_DEGRADED:
		return HealthDegraded
	}
	return HealthUnknown
}

func member(l *nmxcpb.NodeLocation, h nmxcpb.Health) Member {
	return Member{ChassisSerial: l.GetChassisSerial(), SlotNumber: int64(l.GetSlotNumber()), TrayIndex: int64(l.GetTrayIndex()), Health: healthOf(h)}
}

// Sample reads the controller's view of its fabric; it never fails as a
// whole, the errors are per read (wrapped with the switch and the read).
func (s *Switch) Sample(ctx context.Context) Sample {
	var out Sample
	if d, err := s.nmx.DomainState(ctx); err != nil {
		out.DomainErr = s.fail("read nmx-c domain state", err)
	} else {
		out.ControlPlane, out.ControllerHealth = d.GetControlPlaneState(), healthOf(d.GetControllerHealth())
	}
	if t, err := s.nmx.Topology(ctx); err != nil {
		out.TopologyErr = s.fail("read nmx-c topology", err)
	} else {
		for _, d := range t.GetDevices() {
			out.Devices = append(out.Devices, Device{ID: d.GetDeviceId(), Type: d.GetDeviceType(), Health: healthOf(d.GetHealth())})
		}
		for _, p := range t.GetPorts() {
			out.Ports = append(out.Ports, Port{DeviceID: p.GetDeviceId(), AdminUp: p.GetAdminUp(), OperUp: p.GetOperUp()})
		}
	}
	if c, err := s.nmx.ComputeNodes(ctx); err != nil {
		out.ComputesErr = s.fail("read nmx-c compute nodes", err)
	} else {
		for _, n := range c.GetNodes() {
			out.Computes = append(out.Computes, member(n.GetLocation(), n.GetHealth()))
		}
	}
	if w, err := s.nmx.SwitchNodes(ctx); err != nil {
		out.SwitchesErr = s.fail("read nmx-c switch nodes", err)
	} else {
		for _, n := range w.GetNodes() {
			out.Switches = append(out.Switches, member(n.GetLocation(), n.GetHealth()))
		}
	}
	return out
}
