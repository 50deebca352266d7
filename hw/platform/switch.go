package platform

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// switchDevice drives an NVLink switch tray: power through its BMC when it
// has a usable one, otherwise through NVUE; device info, firmware listing
// and firmware update (switchfw.go) through NVUE and the host's SSH.
type switchDevice struct {
	powerNote
	cfg    Config
	rf     *redfish.Client // nil without a usable BMC endpoint
	nvue   *nvue.Client    // nil without a host endpoint
	ssh    sshsftp.Options // how firmware is staged on the host
	onie   hw.Credentials  // the ONIE login of the host
	reboot SwitchRebootTiming
}

func newSwitch(d Deps, c Config) (Device, error) {
	s := &switchDevice{cfg: c, ssh: d.SSH, onie: d.ONIE, reboot: d.SwitchReboot.withDefaults()}
	bmc := c.BMC
	if bmc.Host() != "" && bmc.Credentials.Username != "" && !bmc.Credentials.Password.IsZero() {
		rf, err := d.Redfish.DeviceClient(hw.KindSwitch, bmc)
		if err != nil {
			return nil, fmt.Errorf("bmc: %w", err)
		}
		s.rf = rf
	}
	if c.Host.Host() != "" {
		if d.NVUE == nil {
			return nil, errors.New("nvue: no connection pool")
		}
		nc, err := d.NVUE.Client(c.Host)
		if err != nil {
			return nil, fmt.Errorf("nvue: %w", err)
		}
		s.nvue = nc
	}
	if s.rf == nil && s.nvue == nil {
		return nil, fmt.Errorf("switch needs a BMC endpoint with credentials or a host endpoint")
	}
	return s, nil
}

func (s *switchDevice) ID() string { return s.cfg.ID }

func (s *switchDevice) Config() Config { return s.cfg }

func (s *switchDevice) Capabilities() []Capability { return switchCaps }

// Close releases nothing: the NVUE connections belong to Deps.NVUE.
func (s *switchDevice) Close() {}

// PowerState: with a BMC, System_0's state, a failed read being Unknown
// (never an error, as upstream); without one, NVUE answering means On.
func (s *switchDevice) PowerState(ctx context.Context) (PowerState, error) {
	st, err := s.powerState(ctx)
	s.read(st, err)
	return st, err
}

func (s *switchDevice) powerState(ctx context.Context) (PowerState, error) {
	if s.rf != nil {
		st, err := s.rf.SystemPowerState(ctx)
		if err != nil {
			return PowerStateUnknown, nil //nolint:nilerr // upstream: an unreadable switch BMC is Unknown
		}
		return fromRedfishPower(st), nil
	}
	if _, err := s.nvue.System(ctx); err != nil {
		return PowerStateUnknown, nil //nolint:nilerr // upstream: an unreachable NVOS is Unknown
	}
	return PowerStateOn, nil
}

// SetPower: every compute op but Nmi through the BMC; without a BMC only
// PowerCycle, through NVUE @power-cycle.
func (s *switchDevice) SetPower(ctx context.Context, op PowerOp) error {
	if s.rf != nil {
		rt, ok := computeResetType(op)
		if !ok || op == PowerNmi {
			return unsupported(s.cfg.ID, s.cfg.Type, "power "+op.String())
		}
		if err := s.rf.ResetSystem(ctx, rt); err != nil {
			return fmt.Errorf("power %s on %s: %w", op, s.cfg.ID, err)
		}
		s.set(op)
		return nil
	}
	if op != PowerCycle {
		return unsupported(s.cfg.ID, s.cfg.Type, "power "+op.String()+" without a BMC")
	}
	if _, err := s.nvue.PowerCycle(ctx); err != nil {
		return fmt.Errorf("power cycle %s: %w", s.cfg.ID, err)
	}
	s.set(op)
	return nil
}

func (s *switchDevice) DeviceInfo(ctx context.Context) (DeviceInfo, error) {
	if s.nvue == nil {
		return DeviceInfo{}, unsupported(s.cfg.ID, s.cfg.Type, "device info without a host endpoint")
	}
	loc, err := s.nvue.ChassisLocation(ctx)
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("device info of %s: %w", s.cfg.ID, err)
	}
	return DeviceInfo{ChassisSerial: loc.ChassisSerial, SlotNumber: loc.SlotNumber, TrayIndex: loc.TrayIndex,
		TopologyID: loc.TopologyID}, nil
}

func (s *switchDevice) FirmwareInventory(ctx context.Context) ([]Firmware, error) {
	if s.nvue == nil {
		return nil, unsupported(s.cfg.ID, s.cfg.Type, "firmware inventory without a host endpoint")
	}
	comps, err := s.nvue.Firmware(ctx)
	if err != nil {
		return nil, fmt.Errorf("firmware inventory of %s: %w", s.cfg.ID, err)
	}
	out := make([]Firmware, 0, len(comps))
	for _, c := range comps {
		// As upstream: every NVUE component counts as updateable.
		fw := Firmware{ID: c.Name, Version: c.Actual, Updateable: true, Health: healthOrUnknown(c.Health),
			Type: ClassifyFirmware(c.Name)}
		if fw.Version == "" {
			fw.Version = unknownVersion
		}
		if c.Installed != "" && c.Installed != c.Actual {
			fw.Pending = c.Installed
		}
		out = append(out, fw)
	}
	return out, nil
}

// AuxPowerCycle power-cycles the tray through its BMC and waits for On
// (the recovery used when NVOS is unreachable).
func (s *switchDevice) AuxPowerCycle(ctx context.Context) error {
	if s.rf == nil {
		return unsupported(s.cfg.ID, s.cfg.Type, "aux power cycle without a BMC")
	}
	if err := s.rf.ResetSystem(ctx, redfish.ResetPowerCycle); err != nil {
		return fmt.Errorf("aux power cycle of %s: %w", s.cfg.ID, err)
	}
	if err := s.rf.WaitPowerState(ctx, redfish.PowerOn); err != nil {
		return fmt.Errorf("aux power cycle of %s: %w", s.cfg.ID, err)
	}
	return nil
}

var _ Device = (*switchDevice)(nil)

// ProbeBMC implements BMCProber; a switch tray without a BMC cannot be
// probed.
func (s *switchDevice) ProbeBMC(ctx context.Context) error {
	if s.rf == nil {
		return unsupported(s.cfg.ID, s.cfg.Type, "bmc probe without a BMC")
	}
	return s.rf.Alive(ctx)
}

// ProbeNVOS implements NVOSProber: GET /nvue_v1/system through the host
// endpoint.
func (s *switchDevice) ProbeNVOS(ctx context.Context) error {
	if s.nvue == nil {
		return unsupported(s.cfg.ID, s.cfg.Type, "NVOS probe without a host endpoint")
	}
	if _, err := s.nvue.System(ctx); err != nil {
		return fmt.Errorf("NVOS of %s: %w", s.cfg.ID, err)
	}
	return nil
}
