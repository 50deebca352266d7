package platform

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrInvalidFirmwareUpdate is returned, before any I/O, for a
// FirmwareUpdate the platform refuses (an unknown component, a file name
// it will not stage, no body).
var ErrInvalidFirmwareUpdate = errors.New("platform: invalid firmware update")

// PowerOp is a requested power operation.
type PowerOp int

// Power operations, as RMS defines them.
const (
	PowerOn PowerOp = iota + 1
	PowerOff
	PowerForceOn
	PowerForceOff
	PowerCycle
	PowerGracefulShutdown
	PowerGracefulRestart
	PowerForceRestart
	PowerNmi
)

// String returns the lower-case operation name, e.g. "force_off".
func (op PowerOp) String() string {
	switch op {
	case PowerOn:
		return "on"
	case PowerOff:
		return "off"
	case PowerForceOn:
		return "force_on"
	case PowerForceOff:
		return "force_off"
	case PowerCycle:
		return "power_cycle"
	case PowerGracefulShutdown:
		return "graceful_shutdown"
	case PowerGracefulRestart:
		return "graceful_restart"
	case PowerForceRestart:
		return "force_restart"
	case PowerNmi:
		return "nmi"
	default:
		return fmt.Sprintf("PowerOp(%d)", int(op))
	}
}

// PowerState is a node's power state.
type PowerState string

// Power states.
const (
	PowerStateOn      PowerState = "On"
	PowerStateOff     PowerState = "Off"
	PowerStateUnknown PowerState = "Unknown"
)

// Capability names one group of operations.
type Capability string

// The capabilities a platform may have.
const (
	CapPower             Capability = "power"
	CapDeviceInfo        Capability = "device_info"
	CapFirmwareInventory Capability = "firmware_inventory"
	CapFirmwareUpdate    Capability = "firmware_update"
	CapAuxPowerCycle     Capability = "aux_power_cycle"
)

// AllCapabilities lists every capability.
func AllCapabilities() []Capability {
	return []Capability{CapPower, CapDeviceInfo, CapFirmwareInventory, CapFirmwareUpdate, CapAuxPowerCycle}
}

// PowerController reads and changes power.
type PowerController interface {
	PowerState(ctx context.Context) (PowerState, error)
	SetPower(ctx context.Context, op PowerOp) error
}

// DeviceInfo is a tray's place in its rack's NVLink domain, as the device
// reports it. Placement is optional: a number the device left out, or
// reported as null, empty or not an integer, is nil ("" for the serial).
// Range checks belong to whoever forwards the values.
type DeviceInfo struct {
	ChassisSerial string
	SlotNumber    *int64
	TrayIndex     *int64
	TopologyID    *int64 // switches only
}

// DeviceInfoReader reads device info.
type DeviceInfoReader interface {
	DeviceInfo(ctx context.Context) (DeviceInfo, error)
}

// Firmware is one firmware component of a node.
type Firmware struct {
	ID  string // inventory id (e.g. FW_BMC_0) or NVUE component (BMC)
	URI string // Redfish inventory URI; empty for NVUE components
	// Version is the running version; an NVUE component listed without
	// one reads "N/A", as upstream reports it.
	Version string
	// Pending is the version that becomes active at the next activation,
	// when the device reports one.
	Pending    string
	Updateable bool
	// Health is the component's health as the device reports it, or
	// "Unknown" when it reports none (upstream's word).
	Health string
	Type   FirmwareType
}

// Placeholders upstream reports for what a device leaves out.
const (
	unknownHealth  = "Unknown"
	unknownVersion = "N/A"
)

// healthOrUnknown is h, or unknownHealth when the device gave none.
func healthOrUnknown(h string) string {
	if h == "" {
		return unknownHealth
	}
	return h
}

// FirmwareInventoryReader lists firmware.
type FirmwareInventoryReader interface {
	FirmwareInventory(ctx context.Context) ([]Firmware, error)
}

// FirmwareUpdate asks for one firmware package to be uploaded.
type FirmwareUpdate struct {
	// Component is an inventory id or URI; "bmc" and "" let the device
	// pick (power shelves ignore it, as upstream does). A switch tray needs
	// its NVUE component: bmc, bios, cpld, cpld<N>, fpga or erot.
	Component string
	// FileName names the package; a switch stages it under its base name,
	// which must be made of [A-Za-z0-9._-] and not start with a dot.
	FileName string
	Body     io.Reader
	Size     int64
	Force    bool
}

// UpdateStart is the outcome of starting an update.
type UpdateStart struct {
	TaskID  string
	Skipped bool
	Reason  string
}

// TaskStatus is a firmware task's progress.
type TaskStatus struct {
	ID      string
	Done    bool // terminal
	Failed  bool // terminal and unsuccessful
	State   string
	Percent int
	Message string
}

// FirmwareUpdater uploads firmware, follows its task and activates it.
type FirmwareUpdater interface {
	StartFirmwareUpdate(ctx context.Context, u FirmwareUpdate) (UpdateStart, error)
	FirmwareTask(ctx context.Context, id string) (TaskStatus, error)
	// ActivateFirmware performs the platform's activation (compute: power
	// off, aux power cycle, power on; shelf: manager reset and down/up
	// wait; switch: NVUE power cycle and down/up wait) and returns when the
	// device is back.
	ActivateFirmware(ctx context.Context) error
}

// AuxPowerCycler cycles a tray's auxiliary power (BMC included) and waits
// for it to come back.
type AuxPowerCycler interface {
	AuxPowerCycle(ctx context.Context) error
}

// NVOSProber asks a switch tray's NVOS (its NVUE API) whether it is up.
type NVOSProber interface {
	ProbeNVOS(ctx context.Context) error
}

// BMCProber reaches a node's BMC once (GET /redfish/v1), to tell a BMC
// that is gone (the error is redfish.ErrUnreachable) from one that is
// there, whatever it answers.
type BMCProber interface {
	ProbeBMC(ctx context.Context) error
}

// Device is a node as the engine drives it. Every method exists on every
// platform; Capabilities says which ones do something, the rest return
// hw.ErrUnsupported.
type Device interface {
	ID() string
	// Config is the configuration the adapter was built from.
	Config() Config
	Capabilities() []Capability
	PowerController
	DeviceInfoReader
	FirmwareInventoryReader
	FirmwareUpdater
	AuxPowerCycler
	// Close releases connections held for the device. Every adapter
	// leaves its connections to the shared pools of Deps and holds
	// nothing to release: hw/nodeops keeps adapters across operations
	// and never closes them.
	Close()
}
