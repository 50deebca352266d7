package fwupdate

import (
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nicflash"
	"github.com/rmsd/rmsd/hw/nodeops"
)

// Target is one package to flash on a node.
type Target struct {
	// Component names the target in descriptions and in result_json: a
	// manifest component ("BMC", "HMC", "PowerShelfFW") or, for a direct
	// update, the request's target as sent.
	Component string
	// Target is what the device's update API is given
	// (platform.FirmwareUpdate.Component): a Redfish inventory id or URI, a
	// switch component name ("bmc", "bios", "cpld"), or "" to let the
	// package decide.
	Target string
	// File is the package's absolute path, already confined to
	// firmware_dir by the caller.
	File string
	// Version is the version the node should report once the package is
	// active; "" when unknown (direct updates): the target is then never
	// skipped ahead of time and its post-activation check is "unverified".
	Version string
	// ActivateAfter activates right after this target instead of once at
	// the end (Supermicro GB300: after the nosbios HMC package and after
	// BIOS). Only meaningful when Plan.Activate is set.
	ActivateAfter bool
}

// Plan is the update of one node.
type Plan struct {
	Node    hw.Node
	Targets []Target
	// Activate performs the platform's activation once every target is
	// flashed (and after each target marked ActivateAfter), if anything was
	// flashed at all.
	Activate bool
	// Force asks the device to accept a downgrade or the same version, and
	// skips the already-up-to-date check.
	Force bool
	// ExpectedAPs are the firmware inventory ids the node's inventory
	// profile requires (checked before each target); nil means no profile.
	ExpectedAPs []string
}

// Timing bounds the waits of an update. Zero fields take the defaults.
type Timing struct {
	// PollInterval is the pause between two reads of a device task
	// (default 5 s).
	PollInterval time.Duration
	// TaskTimeout bounds one task; 0 takes upstream's bound by node kind
	// (switch 3 h, compute 90 min, power shelf 60 min).
	TaskTimeout time.Duration
	// TaskReadGrace is how long failing task reads are retried before the
	// task counts as lost (default 15 min).
	TaskReadGrace time.Duration
	// VersionCheckDelay is the wait before the post-activation version
	// check, VersionCheckInterval the pause between its attempts and
	// VersionCheckAttempts their number (defaults 60 s, 60 s, 5).
	VersionCheckDelay    time.Duration
	VersionCheckInterval time.Duration
	VersionCheckAttempts int
}

// Deps are what an update drives the node with.
type Deps struct {
	Nodes  *nodeops.Runner
	Timing Timing
	// NIC flashes in-band NIC targets (CX7, CX8, BF3_NIC) over the
	// node's host; nil refuses them.
	NIC *nicflash.Flasher
	// FlintProfiles are the flint_devices counts of the inventory
	// profiles, by profile name: the in-band stage checks the node's.
	FlintProfiles map[string]nicflash.Counts
}
