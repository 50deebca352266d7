package main

import (
	"testing"
	"time"
)

func TestPaceFollowsTheSimulatorOrPollScale(t *testing.T) {
	real := paceFor(false, 0.01, 1)
	if got := real.of(5 * time.Second); got != 5*time.Second {
		t.Errorf("against hardware a 5 s poll became %v", got)
	}
	if got := real.liveness(); got != 15*time.Second {
		t.Errorf("against hardware the reboot probe is %v, want upstream's 15 s", got)
	}
	sim := paceFor(true, 0.01, 1)
	if got := sim.of(5 * time.Second); got != 50*time.Millisecond {
		t.Errorf("simulated task poll %v, want 5 s × 0.01", got)
	}
	// A simulated BMC reboot of 90 s lasts 0.9 s at 0.01: probes every
	// 37.5 ms see it down many times.
	if got := sim.liveness(); got != 37500*time.Microsecond {
		t.Errorf("simulated reboot probe %v, want 15 s × 0.01 / 4", got)
	}
	if got := sim.switchAdmin(); got.ResetPoll != 12500*time.Microsecond || got.SDNPoll != 50*time.Millisecond || got.ResetTimeout != 0 {
		t.Errorf("simulated switch reset timing %+v: probes paced, timeouts upstream's", got)
	}
	if got := real.switchAdmin(); got.ResetPoll != 5*time.Second || got.LoginRetry != 5*time.Second {
		t.Errorf("against hardware the switch reset timing is %+v, want upstream's 5 s", got)
	}
	if got := paceFor(true, 1e-9, 1).of(time.Second); got != time.Millisecond {
		t.Errorf("a tiny time scale polls every %v, want the 1 ms floor", got)
	}
	if got := paceFor(true, 2, 1).of(time.Second); got != time.Second {
		t.Errorf("a slowed-down simulator polls every %v, want upstream's pace", got)
	}
	// A daemon managing a simulator in another process follows
	// poll_scale; its own simulator's time_scale wins when it has one.
	if got := paceFor(false, 1, 0.01).liveness(); got != 37500*time.Microsecond {
		t.Errorf("poll_scale 0.01: reboot probe %v, want 15 s × 0.01 / 4", got)
	}
	if got := paceFor(true, 0.1, 0.01).of(time.Second); got != 100*time.Millisecond {
		t.Errorf("--simulate at time_scale 0.1 with poll_scale 0.01 polls every %v, want the time scale's 100 ms", got)
	}
}

func TestPaceScalesSwitchImagePollsNotBounds(t *testing.T) {
	real := paceFor(false, 0.01, 1).switchImageTiming()
	if real.ActionPollInterval != 5*time.Second || real.SteadyDelay != 30*time.Second || real.SteadyInterval != 10*time.Second {
		t.Errorf("against hardware the switch image waits are %+v, want upstream's 5 s, 30 s and 10 s", real)
	}
	sim := paceFor(true, 0.01, 1).switchImageTiming()
	if sim.ActionPollInterval != 50*time.Millisecond || sim.SteadyDelay != 300*time.Millisecond || sim.SteadyInterval != 25*time.Millisecond {
		t.Errorf("simulated switch image waits %+v, want 5 s and 30 s × 0.01 and 10 s × 0.01 / 4", sim)
	}
	if sim.HandoffTimeout != 0 || sim.UninstallTimeout != 0 || sim.SteadyWindows != nil {
		t.Errorf("simulated switch image bounds were changed: %+v", sim)
	}
}
