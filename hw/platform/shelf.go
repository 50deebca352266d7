package platform

import (
	"context"
	"fmt"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
)

// shelfDevice drives a power shelf (LiteOn/PMC or Delta style).
type shelfDevice struct {
	powerNote
	cfg   Config
	rf    *redfish.Client
	style redfish.ShelfStyle
}

func newShelf(d Deps, c Config, style redfish.ShelfStyle) (Device, error) {
	rf, err := d.Redfish.DeviceClient(hw.KindPowerShelf, c.BMC)
	if err != nil {
		return nil, fmt.Errorf("bmc: %w", err)
	}
	return &shelfDevice{cfg: c, rf: rf, style: style}, nil
}

func (s *shelfDevice) ID() string { return s.cfg.ID }

func (s *shelfDevice) Config() Config { return s.cfg }

func (s *shelfDevice) Capabilities() []Capability { return shelfCaps }

func (s *shelfDevice) Close() {}

func (s *shelfDevice) PowerState(ctx context.Context) (PowerState, error) {
	st, err := s.rf.ShelfPowerState(ctx, s.style)
	s.read(fromRedfishPower(st), err)
	if err != nil {
		return PowerStateUnknown, fmt.Errorf("power state of %s: %w", s.cfg.ID, err)
	}
	return fromRedfishPower(st), nil
}

// SetPower: On/ForceOn → on, Off → graceful off, ForceOff → force off;
// shelves have nothing else.
func (s *shelfDevice) SetPower(ctx context.Context, op PowerOp) error {
	var intent redfish.ShelfIntent
	switch op {
	case PowerOn, PowerForceOn:
		intent = redfish.ShelfOn
	case PowerOff, PowerGracefulShutdown:
		intent = redfish.ShelfOff
	case PowerForceOff:
		intent = redfish.ShelfForceOff
	default:
		return unsupported(s.cfg.ID, s.cfg.Type, "power "+op.String())
	}
	if err := s.rf.SetShelfPower(ctx, s.style, intent); err != nil {
		return fmt.Errorf("power %s on %s: %w", op, s.cfg.ID, err)
	}
	s.set(op)
	return nil
}

func (s *shelfDevice) DeviceInfo(context.Context) (DeviceInfo, error) {
	return DeviceInfo{}, unsupported(s.cfg.ID, s.cfg.Type, "device info")
}

func (s *shelfDevice) FirmwareInventory(ctx context.Context) ([]Firmware, error) {
	inv, err := s.rf.FirmwareInventory(ctx)
	if err != nil {
		return nil, fmt.Errorf("firmware inventory of %s: %w", s.cfg.ID, err)
	}
	return fromRedfishInventory(inv), nil
}

// StartFirmwareUpdate stages the package with ApplyTime=OnReset; the
// component is ignored, as upstream clears it for shelves.
func (s *shelfDevice) StartFirmwareUpdate(ctx context.Context, u FirmwareUpdate) (UpdateStart, error) {
	st, err := s.rf.PushShelfFirmware(ctx, redfish.Firmware{FileName: u.FileName, Body: u.Body, Size: u.Size})
	if err != nil {
		return UpdateStart{}, fmt.Errorf("firmware update of %s: %w", s.cfg.ID, err)
	}
	return fromRedfishStart(st), nil
}

func (s *shelfDevice) FirmwareTask(ctx context.Context, id string) (TaskStatus, error) {
	t, err := s.rf.Task(ctx, id)
	if err != nil {
		return TaskStatus{}, fmt.Errorf("firmware task of %s: %w", s.cfg.ID, err)
	}
	return fromRedfishTask(t), nil
}

// ActivateFirmware restarts the shelf manager and waits until it has been
// seen down and back up.
func (s *shelfDevice) ActivateFirmware(ctx context.Context) error {
	if err := s.rf.RestartManagerAndWait(ctx, false); err != nil {
		return fmt.Errorf("activate firmware on %s: %w", s.cfg.ID, err)
	}
	return nil
}

func (s *shelfDevice) AuxPowerCycle(context.Context) error {
	return unsupported(s.cfg.ID, s.cfg.Type, "aux power cycle")
}

var _ Device = (*shelfDevice)(nil)

// ProbeBMC implements BMCProber.
func (s *shelfDevice) ProbeBMC(ctx context.Context) error { return s.rf.Alive(ctx) }
