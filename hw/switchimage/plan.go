package switchimage

import (
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
)

// Plan is the image update of one switch.
type Plan struct {
	Node hw.Node
	// File is the image's absolute local path, already confined to
	// firmware_dir (or the catalog cache) by the caller.
	File string
	// ImageName is the file name on the switch, under /host/nos-images.
	ImageName string
	// Target is the build id the switch reports once it runs the image,
	// "nvos-X.Y.Z" (hw/nvue.BuildIDFromFile).
	Target string
	// AllowONIERecovery is the request's allow_onie_recovery: a switch
	// found without NVOS (NVUE silent, ONIE answering over SSH) gets the
	// image through ONIE's installer instead of failing in inspect_state.
	AllowONIERecovery bool
}

// Timing bounds the waits of an update. Zero fields take upstream's
// values.
type Timing struct {
	// ActionPollInterval is the pause between two reads of an NVUE action
	// (default 5 s).
	ActionPollInterval time.Duration
	// UninstallTimeout bounds cleanup_old_partition (default 5 min) and
	// HandoffTimeout wait_for_install_handoff (default 10 min).
	UninstallTimeout time.Duration
	HandoffTimeout   time.Duration
	// SteadyDelay is the pause before the first read of the partitions
	// after the hand-off (default 30 s), SteadyInterval the pause between
	// two reads (default 10 s).
	SteadyDelay    time.Duration
	SteadyInterval time.Duration
	// SteadyWindows are the successive windows the switch has to reach the
	// target in (default 5, 10 and 15 min: 30 min in all).
	SteadyWindows []time.Duration
}

// Upstream's values (southbound §3.8).
const (
	DefaultActionPollInterval = 5 * time.Second
	DefaultUninstallTimeout   = 5 * time.Minute
	DefaultHandoffTimeout     = 10 * time.Minute
	DefaultSteadyDelay        = 30 * time.Second
	DefaultSteadyInterval     = 10 * time.Second
)

// DefaultSteadyWindows are upstream's steady-state windows.
func DefaultSteadyWindows() []time.Duration {
	return []time.Duration{5 * time.Minute, 10 * time.Minute, 15 * time.Minute}
}

func (t Timing) withDefaults() Timing {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.ActionPollInterval, DefaultActionPollInterval)
	def(&t.UninstallTimeout, DefaultUninstallTimeout)
	def(&t.HandoffTimeout, DefaultHandoffTimeout)
	def(&t.SteadyDelay, DefaultSteadyDelay)
	def(&t.SteadyInterval, DefaultSteadyInterval)
	var windows []time.Duration
	for _, w := range t.SteadyWindows {
		if w > 0 {
			windows = append(windows, w)
		}
	}
	if len(windows) == 0 {
		windows = DefaultSteadyWindows()
	}
	t.SteadyWindows = windows
	return t
}

// Deps are what an update drives the switch with.
type Deps struct {
	Nodes  *nodeops.Runner
	Timing Timing
	// Now is the clock of the timeline (time.Now when nil).
	Now func() time.Time
}
