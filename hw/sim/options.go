package sim

import (
	"fmt"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rs/zerolog"
)

// Layout is the make-up of one rack.
type Layout struct {
	Compute     int
	Switches    int
	Shelves     int
	ComputeType hw.NodeType
	SwitchType  hw.NodeType
	ShelfType   hw.NodeType
}

// GB200NVL72 is the default rack: 18 compute trays, 9 NVLink switch trays
// and 8 LiteOn power shelves.
func GB200NVL72() Layout {
	return Layout{Compute: 18, Switches: 9, Shelves: 8,
		ComputeType: hw.ComputeGB200Nvidia, SwitchType: hw.SwitchGB200Nvidia, ShelfType: hw.PowerShelfGB200Liteon}
}

// Timing holds the simulated (device-time) durations of slow operations.
// They are multiplied by Options.TimeScale before use.
type Timing struct {
	// ComputeFlash is how long a compute/switch-BMC firmware task runs.
	ComputeFlash time.Duration
	// ShelfFlash is how long a power-shelf firmware task runs.
	ShelfFlash time.Duration
	// BMCReboot is how long a BMC is unreachable after a manager reset or
	// an aux power cycle.
	BMCReboot time.Duration
	// ShelfReboot is how long a power shelf is unreachable after a manager
	// reset.
	ShelfReboot time.Duration
	// PowerTransition is how long a system stays PoweringOn/PoweringOff.
	PowerTransition time.Duration
	// ResetDelay is how long a device keeps answering after it accepted a
	// reset, before it goes down.
	ResetDelay time.Duration
	// HostReboot is how long an NVOS host is down after its BMC power
	// cycles the tray, or after rack power returns.
	HostReboot time.Duration
	// NVOSReboot is how long an NVOS host is unreachable during a reboot
	// NVOS performs itself (an NVUE power cycle, an install that reboots,
	// a factory reset).
	NVOSReboot time.Duration
	// Discharge is how long compute and switch trays keep running after
	// the last power shelf of their rack turned off; power back within it
	// leaves them untouched, later they cold-boot.
	Discharge time.Duration
}

// DefaultTiming returns realistic durations.
func DefaultTiming() Timing {
	return Timing{
		ComputeFlash:    10 * time.Minute,
		ShelfFlash:      3 * time.Minute,
		BMCReboot:       90 * time.Second,
		ShelfReboot:     45 * time.Second,
		PowerTransition: 10 * time.Second,
		ResetDelay:      time.Second,
		HostReboot:      3 * time.Minute,
		NVOSReboot:      2 * time.Minute,
		Discharge:       2 * time.Minute,
	}
}

// Options configure a Fleet. Zero fields take defaults.
type Options struct {
	// Racks is the number of racks (default 1).
	Racks int
	// Layout is each rack's make-up (default GB200NVL72()).
	Layout Layout
	// TimeScale multiplies every simulated duration (default 1; 0.001 makes
	// a 10-minute flash take 0.6 s). Must be > 0 when set.
	TimeScale float64
	// Timing are the simulated durations (default DefaultTiming()); zero
	// fields take their default.
	Timing Timing
	// Credentials every device accepts at start (default admin / a fixed
	// simulator password). Change per device with Device.SetCredentials.
	Credentials hw.Credentials
	// Network is the second octet of the first rack's addresses: devices
	// of rack r listen on 127.(Network + r/256).(r%256).N (default 77).
	Network int
	// Port every BMC listens on; 0 picks an ephemeral port per device
	// (kept across simulated reboots).
	Port int
	// NVUEPort is the NVUE port of every NVOS host; 0 picks one free port
	// that every host shares (as real switches do; see Fleet.NVUEPort).
	NVUEPort int
	// SSHPort is the SSH port of every NVOS host; 0 picks one free port
	// that every host shares, as for NVUEPort (see Fleet.SSHPort).
	SSHPort int
	// NMXPort and GNMIPort are the NMX-C and gNMI ports of every NVOS
	// host; 0 picks one free port each that every host shares.
	NMXPort  int
	GNMIPort int
	// SwitchHosts starts the NVOS host of every switch tray (default
	// NVOSHosts, unless NoSwitchHosts).
	SwitchHosts SwitchHostFactory
	// NoSwitchHosts starts switch trays with their BMC only.
	NoSwitchHosts bool
	// ComputeHosts starts the host OS of every compute tray: SSH with the
	// Mellanox tools, for in-band NIC firmware (hw/sim/hostsim).
	ComputeHosts bool
	// HostCredentials is the compute hosts' login (default
	// DefaultHostUser / DefaultHostPassword).
	HostCredentials hw.Credentials
	// FactorySwitchCertificates has every NVOS host serve NVUE, NMX-C and
	// gNMI with a self-signed certificate of its own, as a switch fresh
	// from the factory does, instead of one issued by the fleet CA (until
	// a service is bound to an imported certificate).
	FactorySwitchCertificates bool
	// Logger receives simulator events. The zero value logs nothing.
	Logger zerolog.Logger
}

// DefaultPassword is the password devices accept when Options.Credentials
// is empty.
const DefaultPassword = "sim-bmc-password"

func (o Options) withDefaults() (Options, error) {
	if o.Racks == 0 {
		o.Racks = 1
	}
	if o.Layout == (Layout{}) {
		o.Layout = GB200NVL72()
	}
	def := GB200NVL72()
	if o.Layout.ComputeType == hw.NodeTypeUnspecified {
		o.Layout.ComputeType = def.ComputeType
	}
	if o.Layout.SwitchType == hw.NodeTypeUnspecified {
		o.Layout.SwitchType = def.SwitchType
	}
	if o.Layout.ShelfType == hw.NodeTypeUnspecified {
		o.Layout.ShelfType = def.ShelfType
	}
	if o.TimeScale == 0 {
		o.TimeScale = 1
	}
	t, d := &o.Timing, DefaultTiming()
	for _, p := range []struct{ v, d *time.Duration }{
		{&t.ComputeFlash, &d.ComputeFlash}, {&t.ShelfFlash, &d.ShelfFlash}, {&t.BMCReboot, &d.BMCReboot},
		{&t.ShelfReboot, &d.ShelfReboot}, {&t.PowerTransition, &d.PowerTransition},
		{&t.ResetDelay, &d.ResetDelay}, {&t.HostReboot, &d.HostReboot}, {&t.Discharge, &d.Discharge},
		{&t.NVOSReboot, &d.NVOSReboot},
	} {
		if *p.v <= 0 {
			*p.v = *p.d
		}
	}
	if o.Credentials.IsZero() {
		o.Credentials = hw.UserPass("admin", DefaultPassword)
	}
	if o.SwitchHosts == nil && !o.NoSwitchHosts {
		o.SwitchHosts = NVOSHosts
	}
	if o.NoSwitchHosts {
		o.SwitchHosts = nil
	}
	if o.HostCredentials.IsZero() {
		o.HostCredentials = hw.UserPass(DefaultHostUser, DefaultHostPassword)
	}
	hosts := 0
	if o.ComputeHosts {
		hosts = o.Layout.Compute
	}
	if o.Network == 0 {
		o.Network = 77
	}
	switch {
	case o.Racks < 0:
		return o, fmt.Errorf("sim options: racks %d: %w", o.Racks, ErrInvalidOptions)
	case o.TimeScale < 0:
		return o, fmt.Errorf("sim options: time scale %g: %w", o.TimeScale, ErrInvalidOptions)
	case o.Layout.Compute < 0 || o.Layout.Switches < 0 || o.Layout.Shelves < 0:
		return o, fmt.Errorf("sim options: negative layout: %w", ErrInvalidOptions)
	case o.Layout.Compute+2*o.Layout.Switches+o.Layout.Shelves+hosts > 254:
		return o, fmt.Errorf("sim options: more than 254 addresses per rack: %w", ErrInvalidOptions)
	case o.Network < 1 || o.Network+(o.Racks-1)/256 > 255:
		return o, fmt.Errorf("sim options: network %d with %d racks leaves 127/8: %w", o.Network, o.Racks, ErrInvalidOptions)
	case o.Layout.ComputeType.Kind() != hw.KindCompute || o.Layout.SwitchType.Kind() != hw.KindSwitch ||
		o.Layout.ShelfType.Kind() != hw.KindPowerShelf:
		return o, fmt.Errorf("sim options: layout node types of the wrong kind: %w", ErrInvalidOptions)
	case o.Credentials.Username == "" || o.Credentials.Password.IsZero():
		return o, fmt.Errorf("sim options: credentials need a user and a password: %w", ErrInvalidOptions)
	}
	return o, nil
}

// scale converts a simulated duration into wall-clock time (at least 1 ms
// for a positive duration, so ordering survives extreme scales).
func (o Options) scale(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	s := time.Duration(float64(d) * o.TimeScale)
	if s < time.Millisecond {
		s = time.Millisecond
	}
	return s
}
