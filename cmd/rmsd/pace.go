package main

import (
	"time"

	"github.com/rmsd/rmsd/hw/fwupdate"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/switchadmin"
	"github.com/rmsd/rmsd/hw/switchimage"
)

// pace scales how often rmsd polls devices while it waits on them (a
// firmware task, a BMC or switch reboot, the versions after an
// activation). Against real hardware it is 1: upstream's intervals. Against
// a simulator every simulated duration is multiplied by its time_scale, so
// a BMC reboot of 90 s lasts 0.9 s at 0.01; polling at upstream's 15 s
// would never see it. There task and version polls are multiplied by the
// time scale, and the probes that must catch a device down by a quarter of
// it, so every simulated outage is probed several times. Timeouts are
// never scaled: they only bound.
type pace float64

// paceFor returns the pace of a daemon: [simulator] time_scale when it
// runs its own simulator (--simulate), else [workflows] poll_scale (1 for
// real hardware, the time scale of a simulator in another process). A
// scale outside (0, 1) is 1.
func paceFor(simulate bool, timeScale, pollScale float64) pace {
	s := pollScale
	if simulate {
		s = timeScale
	}
	if s <= 0 || s >= 1 {
		return 1
	}
	return pace(s)
}

// of scales one polling interval, never below a millisecond.
func (p pace) of(d time.Duration) time.Duration {
	return max(time.Millisecond, time.Duration(float64(d)*float64(p)))
}

// probe scales the interval of a probe that must see a device go down:
// four times as often as of while simulating.
func (p pace) probe(d time.Duration) time.Duration {
	if p >= 1 {
		return d
	}
	return (p / 4).of(d)
}

// firmwareTiming is the firmware jobs' timing: the configured task poll
// interval and task bound, and upstream's version-check cadence, paced.
func (p pace) firmwareTiming(taskPoll, taskTimeout time.Duration) fwupdate.Timing {
	return fwupdate.Timing{
		PollInterval: p.of(taskPoll), TaskTimeout: taskTimeout,
		VersionCheckDelay: p.of(fwupdate.DefaultVersionCheckDelay), VersionCheckInterval: p.of(fwupdate.DefaultVersionCheckInterval),
	}
}

// switchReboot is the paced probe interval of switch reboot waits.
func (p pace) switchReboot() platform.SwitchRebootTiming {
	return platform.SwitchRebootTiming{ProbeInterval: p.probe(platform.DefaultSwitchProbeInterval)}
}

// switchImageTiming is the switch system image jobs' timing: upstream's
// action polls, settle delay and partition reads, paced; the partition
// reads probe, since the switch's reboot lies between them. The stage
// bounds and steady-state windows stay upstream's.
func (p pace) switchImageTiming() switchimage.Timing {
	return switchimage.Timing{
		ActionPollInterval: p.of(switchimage.DefaultActionPollInterval),
		SteadyDelay:        p.of(switchimage.DefaultSteadyDelay),
		SteadyInterval:     p.probe(switchimage.DefaultSteadyInterval),
	}
}

// liveness is the paced probe interval of BMC reboot and power waits.
func (p pace) liveness() time.Duration { return p.probe(redfish.DefaultLivenessInterval) }

// switchAdmin is the switch password and factory reset jobs' timing: the
// probes that must see a reset switch go down paced as reboot probes, the
// other polls as task polls, upstream's timeouts.
func (p pace) switchAdmin() switchadmin.Timing {
	return switchadmin.Timing{
		ResetPoll: p.probe(switchadmin.DefaultResetPoll), LoginRetry: p.of(switchadmin.DefaultLoginRetry),
		SDNPoll: p.of(switchadmin.DefaultSDNPoll),
	}
}
