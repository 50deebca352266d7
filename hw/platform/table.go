package platform

import (
	"fmt"
	"slices"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rs/zerolog"
)

// Deps are the shared clients adapters are built from.
type Deps struct {
	// Redfish is the shared BMC connection pool (required for every type).
	Redfish *redfish.Pool
	// NVUE is the shared NVUE connection pool of switch trays (required for
	// a switch with a host endpoint).
	NVUE *nvue.Pool
	// SSH is how switch firmware is staged on a switch's host (port, host
	// key policy, timeouts); its HostKey must be set for switch firmware
	// updates (see sshsftp.HostKeyPolicy).
	SSH sshsftp.Options
	// ONIE is the SSH login of a switch's ONIE install environment, used to
	// install NVOS on a switch that has none (SwitchImager.InstallFromONIE).
	ONIE hw.Credentials
	// SwitchReboot bounds the waits for a switch reboot during a firmware
	// update; zero fields take upstream's values.
	SwitchReboot SwitchRebootTiming
	// Logger receives adapter logs; the zero value logs nothing.
	Logger zerolog.Logger
	// PowerSeen, when set, is told of every power state read or set
	// through an adapter (the console's last-known power view).
	PowerSeen PowerSeen
}

// Config identifies one node.
type Config struct {
	ID string
	// RackID is the node's rack; only PowerSeen reports it.
	RackID string
	Type   hw.NodeType
	BMC    hw.Endpoint
	// Host is the NVOS endpoint of a switch tray.
	Host hw.Endpoint
}

// Entry is one row of the platform table.
type Entry struct {
	Type         hw.NodeType
	Capabilities []Capability
	New          func(deps Deps, cfg Config) (Device, error)
}

var (
	computeCaps = []Capability{CapPower, CapDeviceInfo, CapFirmwareInventory, CapFirmwareUpdate, CapAuxPowerCycle}
	shelfCaps   = []Capability{CapPower, CapFirmwareInventory, CapFirmwareUpdate}
	switchCaps  = []Capability{CapPower, CapDeviceInfo, CapFirmwareInventory, CapFirmwareUpdate, CapAuxPowerCycle}
)

func computeEntry(t hw.NodeType) Entry {
	return Entry{Type: t, Capabilities: computeCaps, New: newCompute}
}

func shelfEntry(t hw.NodeType, style redfish.ShelfStyle) Entry {
	return Entry{Type: t, Capabilities: shelfCaps, New: func(d Deps, c Config) (Device, error) {
		return newShelf(d, c, style)
	}}
}

func switchEntry(t hw.NodeType) Entry {
	return Entry{Type: t, Capabilities: switchCaps, New: newSwitch}
}

// Lookup returns the table entry of a node type. This switch is the one
// place node types are matched.
func Lookup(t hw.NodeType) (Entry, bool) {
	switch t {
	case hw.ComputeGB200Nvidia, hw.ComputeGB300Nvidia, hw.ComputeGB300Lenovo, hw.ComputeVRNVL72Nvidia,
		hw.ComputeGB200Wiwynn, hw.ComputeGB300Supermicro:
		return computeEntry(t), true
	case hw.PowerShelfGB200Liteon, hw.PowerShelfGB300Liteon:
		return shelfEntry(t, redfish.ShelfLiteOn), true
	case hw.PowerShelfGB200Delta, hw.PowerShelfGB300Delta:
		return shelfEntry(t, redfish.ShelfDelta), true
	case hw.SwitchGB200Nvidia, hw.SwitchGB300Nvidia, hw.SwitchVRNVL72Nvidia:
		return switchEntry(t), true
	default:
		return Entry{}, false
	}
}

// Supports reports whether node type t has capability c, without building
// an adapter.
func Supports(t hw.NodeType, c Capability) bool {
	e, ok := Lookup(t)
	return ok && slices.Contains(e.Capabilities, c)
}

// New builds the adapter for cfg.Type.
func New(deps Deps, cfg Config) (Device, error) {
	e, ok := Lookup(cfg.Type)
	if !ok {
		return nil, fmt.Errorf("platform for node %s type %s: %w", cfg.ID, cfg.Type, hw.ErrUnsupported)
	}
	if deps.Redfish == nil {
		return nil, fmt.Errorf("platform for node %s: no redfish pool", cfg.ID)
	}
	d, err := e.New(deps, cfg)
	if err != nil {
		return nil, fmt.Errorf("platform for node %s (%s): %w", cfg.ID, cfg.Type.Name(), err)
	}
	if p, ok := d.(powerReporter); ok && deps.PowerSeen != nil {
		p.setPowerSeen(deps.PowerSeen, cfg)
	}
	return d, nil
}

// unsupported builds the error of an operation a platform lacks.
func unsupported(id string, t hw.NodeType, op string) error {
	return fmt.Errorf("%s on %s (%s): %w", op, id, t.Name(), hw.ErrUnsupported)
}
