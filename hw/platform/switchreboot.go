package platform

import "time"

// SwitchRebootTiming bounds the waits for a switch tray to go down and come
// back during a firmware update. Zero fields take upstream's values.
type SwitchRebootTiming struct {
	// ProbeInterval is the pause between two probes of
	// /nvue_v1/platform/firmware (default 15 s, upstream's power-cycle
	// cadence; upstream probes an install reboot every 30 s).
	ProbeInterval time.Duration
	// InstallTimeout bounds the wait for a reboot a firmware install
	// hands off to (default 4 min).
	InstallTimeout time.Duration
	// PowerCycleTimeout bounds the wait after the activation power cycle
	// (default 45 probes × 15 s).
	PowerCycleTimeout time.Duration
}

// Upstream's switch reboot bounds.
const (
	DefaultSwitchProbeInterval     = 15 * time.Second
	DefaultSwitchInstallReboot     = 4 * time.Minute
	DefaultSwitchPowerCycleTimeout = 45 * 15 * time.Second
)

func (t SwitchRebootTiming) withDefaults() SwitchRebootTiming {
	if t.ProbeInterval <= 0 {
		t.ProbeInterval = DefaultSwitchProbeInterval
	}
	if t.InstallTimeout <= 0 {
		t.InstallTimeout = DefaultSwitchInstallReboot
	}
	if t.PowerCycleTimeout <= 0 {
		t.PowerCycleTimeout = DefaultSwitchPowerCycleTimeout
	}
	return t
}
