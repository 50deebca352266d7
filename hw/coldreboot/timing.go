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
	}
}
