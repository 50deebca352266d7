package fwupdate

import (
	"time"

	"github.com/rmsd/rmsd/hw"
)

// Upstream's cadence of the post-activation version check (southbound
// §3.5): the defaults of Timing's VersionCheck fields.
const (
	DefaultVersionCheckDelay    = 60 * time.Second
	DefaultVersionCheckInterval = 60 * time.Second
)

// Upstream's bounds (southbound §3.5, job-model §4.6).
const (
	defaultPollInterval         = 5 * time.Second
	defaultTaskReadGrace        = 15 * time.Minute
	defaultVersionCheckAttempts = 5

	switchTaskTimeout  = 3 * time.Hour
	computeTaskTimeout = 90 * time.Minute
	shelfTaskTimeout   = 60 * time.Minute
)

// withDefaults fills the zero fields of t; a zero TaskTimeout takes the
// bound of kind.
func (t Timing) withDefaults(kind hw.Kind) Timing {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.PollInterval, defaultPollInterval)
	def(&t.TaskTimeout, taskTimeout(kind))
	def(&t.TaskReadGrace, defaultTaskReadGrace)
	def(&t.VersionCheckDelay, DefaultVersionCheckDelay)
	def(&t.VersionCheckInterval, DefaultVersionCheckInterval)
	if t.VersionCheckAttempts <= 0 {
		t.VersionCheckAttempts = defaultVersionCheckAttempts
	}
	return t
}

// taskTimeout is upstream's bound on one firmware task of a node of kind:
// a switch 3 h, a compute tray 90 min, a power shelf 60 min. An unknown
// kind gets the longest.
func taskTimeout(kind hw.Kind) time.Duration {
	switch kind {
	case hw.KindCompute:
		return computeTaskTimeout
	case hw.KindPowerShelf:
		return shelfTaskTimeout
	default:
		return switchTaskTimeout
	}
}
