package coldreboot

import "time"

// Timing are the runbook's waits. Every stage that polls waits at least its
// floor, then checks every PollInterval until its condition holds or its
// maximum has passed since the stage began.
type Timing struct {
	PrestageShutdownFloor   time.Duration
	PrestageShutdownPollMax time.Duration
	DischargeFloor          time.Duration
	DischargePollMax        time.Duration
	BMCUpFloor              time.Duration
	BMCUpPollMax            time.Duration
	// NVOSHelloBackoff is the first wait between NVOS readiness attempts;
	// each further wait doubles it.
	NVOSHelloBackoff  time.Duration
	NVOSHelloAttempts int
	ComputeBootWait   time.Duration
	PollInterval      time.Duration
	// RestoreTimeout bounds the restore step: powering the shelves back on
	// when a run past power_off_shelves is stopped before it ends (0 means
	// DefaultRestoreTimeout).
	RestoreTimeout time.Duration
}

// DefaultRestoreTimeout is the restore step's bound when Timing leaves it
// zero: long enough for every shelf's power-on request to time out once.
const DefaultRestoreTimeout = 45 * time.Second

// AfterShelvesOff is the least time a run needs from the moment the shelves
// go off to its end: the discharge floor, the BMC floor and the compute
// boot wait (600 s with DefaultTiming). A shutdown drain window shorter
// than this plus RestoreTimeout cannot let a cold reboot finish; rmsd's
// default drain window is chosen above it.
func (t Timing) AfterShelvesOff() time.Duration {
	return t.DischargeFloor + t.BMCUpFloor + t.ComputeBootWait
}

// restoreTimeout is RestoreTimeout, or its default.
func (t Timing) restoreTimeout() time.Duration {
	if t.RestoreTimeout > 0 {
		return t.RestoreTimeout
	}
	return DefaultRestoreTimeout
}

// DefaultTiming is upstream's runbook timing.
func DefaultTiming() Timing {
	return Timing{
		PrestageShutdownFloor:   0,
		PrestageShutdownPollMax: 300 * time.Second,
		DischargeFloor:          180 * time.Second,
		DischargePollMax:        600 * time.Second,
		BMCUpFloor:              120 * time.Second,
		BMCUpPollMax:            600 * time.Second,
		NVOSHelloBackoff:        30 * time.Second,
		NVOSHelloAttempts:       5,
		ComputeBootWait:         300 * time.Second,
		PollInterval:            15 * time.Second,
		RestoreTimeout:          DefaultRestoreTimeout,
	}
}
