package platform

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
)

// computeDevice drives a compute tray through its BMC.
type computeDevice struct {
	powerNote
	cfg Config
	rf  *redfish.Client
}

func newCompute(d Deps, c Config) (Device, error) {
	rf, err := d.Redfish.DeviceClient(hw.KindCompute, c.BMC)
	if err != nil {
		return nil, fmt.Errorf("bmc: %w", err)
	}
	return &computeDevice{cfg: c, rf: rf}, nil
}

func (c *computeDevice) ID() string { return c.cfg.ID }

func (c *computeDevice) Config() Config { return c.cfg }

func (c *computeDevice) Capabilities() []Capability { return computeCaps }

func (c *computeDevice) Close() {}

func (c *computeDevice) PowerState(ctx context.Context) (PowerState, error) {
	s, err := c.rf.SystemPowerState(ctx)
	c.read(fromRedfishPower(s), err)
	if err != nil {
		return PowerStateUnknown, fmt.Errorf("power state of %s: %w", c.cfg.ID, err)
	}
	return fromRedfishPower(s), nil
}

// computeResetType maps a power op to ComputerSystem.Reset; Off is sent as
// GracefulShutdown, as upstream does.
func computeResetType(op PowerOp) (redfish.ResetType, bool) {
	switch op {
	case PowerOn:
		return redfish.ResetOn, true
	case PowerOff, PowerGracefulShutdown:
		return redfish.ResetGracefulShutdown, true
	case PowerForceOn:
		return redfish.ResetForceOn, true
	case PowerForceOff:
		return redfish.ResetForceOff, true
	case PowerCycle:
		return redfish.ResetPowerCycle, true
	case PowerGracefulRestart:
		return redfish.ResetGracefulRestart, true
	case PowerForceRestart:
		return redfish.ResetForceRestart, true
	case PowerNmi:
		return redfish.ResetNmi, true
	default:
		return "", false
	}
}

func (c *computeDevice) SetPower(ctx context.Context, op PowerOp) error {
	rt, ok := computeResetType(op)
	if !ok {
		return unsupported(c.cfg.ID, c.cfg.Type, "power "+op.String())
	}
	if err := c.rf.ResetSystem(ctx, rt); err != nil {
		return fmt.Errorf("power %s on %s: %w", op, c.cfg.ID, err)
	}
	c.set(op)
	return nil
}

func (c *computeDevice) DeviceInfo(ctx context.Context) (DeviceInfo, error) {
	t, err := c.rf.MNNVLinkTopology(ctx)
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("device info of %s: %w", c.cfg.ID, err)
	}
	return DeviceInfo{ChassisSerial: t.ChassisSerialNumber, SlotNumber: t.TraySlotNumber, TrayIndex: t.TraySlotIndex}, nil
}

func (c *computeDevice) FirmwareInventory(ctx context.Context) ([]Firmware, error) {
	inv, err := c.rf.FirmwareInventory(ctx)
	if err != nil {
		return nil, fmt.Errorf("firmware inventory of %s: %w", c.cfg.ID, err)
	}
	return fromRedfishInventory(inv), nil
}

// hmcPackage matches file names upstream treats as HMC (HGX) packages.
var hmcPackage = regexp.MustCompile(`P4059|P4764|P4974|P4975|HGX|HMC|GB200-NVL4`)

// computeTargets builds UpdateParameters.Targets the way upstream does.
func computeTargets(component, fileName string) []string {
	switch {
	case strings.EqualFold(component, "bmc"):
		return []string{}
	case strings.HasPrefix(component, "/"):
		return []string{component}
	case component != "":
		return []string{redfish.FirmwareInventoryPath + "/" + component}
	case hmcPackage.MatchString(fileName):
		return []string{"/redfish/v1/Chassis/HGX_Chassis_0"}
	default:
		return []string{}
	}
}

// StartFirmwareUpdate checks the update preconditions (write protection,
// background copy, no task running), then uploads the package.
func (c *computeDevice) StartFirmwareUpdate(ctx context.Context, u FirmwareUpdate) (UpdateStart, error) {
	if err := c.rf.CheckUpdatePreconditions(ctx); err != nil {
		return UpdateStart{}, fmt.Errorf("firmware update of %s: %w", c.cfg.ID, err)
	}
	s, err := c.rf.StartMultipartUpdate(ctx, redfish.MultipartUpdate{
		Targets: computeTargets(u.Component, u.FileName), ForceUpdate: u.Force,
		File: redfish.Firmware{FileName: u.FileName, Body: u.Body, Size: u.Size},
	})
	if err != nil {
		return UpdateStart{}, fmt.Errorf("firmware update of %s: %w", c.cfg.ID, err)
	}
	return fromRedfishStart(s), nil
}

func (c *computeDevice) FirmwareTask(ctx context.Context, id string) (TaskStatus, error) {
	t, err := c.rf.Task(ctx, id)
	if err != nil {
		return TaskStatus{}, fmt.Errorf("firmware task of %s: %w", c.cfg.ID, err)
	}
	return fromRedfishTask(t), nil
}

// ActivateFirmware powers the host off, cycles aux power (the BMC restarts
// and activates what it staged), waits for the BMC to be back and powers
// the host on again, waiting for On.
func (c *computeDevice) ActivateFirmware(ctx context.Context) error {
	step := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("activate firmware on %s: %s: %w", c.cfg.ID, what, err)
		}
		return nil
	}
	if err := step("power off", c.rf.ResetSystem(ctx, redfish.ResetForceOff)); err != nil {
		return err
	}
	if err := step("wait off", c.rf.WaitPowerState(ctx, redfish.PowerOff)); err != nil {
		return err
	}
	if err := step("aux power cycle", c.rf.AuxPowerCycle(ctx)); err != nil {
		return err
	}
	// Upstream's GB300/VR path only waits for /redfish/v1 to answer, which
	// can pass before the BMC has even gone down; every generation here
	// waits to see it down and back.
	if err := step("wait for bmc restart", c.rf.WaitDownUp(ctx)); err != nil {
		return err
	}
	if err := step("power on", c.rf.ResetSystem(ctx, redfish.ResetOn)); err != nil {
		return err
	}
	return step("wait on", c.rf.WaitPowerState(ctx, redfish.PowerOn))
}

// AuxPowerCycle cycles the tray's aux power and waits for the BMC to go
// down and come back.
func (c *computeDevice) AuxPowerCycle(ctx context.Context) error {
	if err := c.rf.AuxPowerCycle(ctx); err != nil {
		return fmt.Errorf("aux power cycle of %s: %w", c.cfg.ID, err)
	}
	if err := c.rf.WaitDownUp(ctx); err != nil {
		return fmt.Errorf("aux power cycle of %s: %w", c.cfg.ID, err)
	}
	return nil
}

var _ Device = (*computeDevice)(nil)

// ProbeBMC implements BMCProber.
func (c *computeDevice) ProbeBMC(ctx context.Context) error { return c.rf.Alive(ctx) }
