package nvossim

import (
	"time"
)

// imageFaults are the fault knobs of NVOS image installs.
type imageFaults struct {
	// installFailure, when set, ends every image install in action_failed
	// with this issue, the switch untouched.
	installFailure string
	// rebootFor, when positive, is the wall-clock length of the reboot an
	// image install ends with, in place of Config.RebootDuration; that
	// reboot starts once a client has read the finished install action.
	rebootFor time.Duration
	// deferred are the boot effects of long reboots not started yet.
	deferred [][]func()
	// expireAdmin resets admin to admin/admin, expired, after an install,
	// as Config.ExpirePasswordOnInstall does.
	expireAdmin bool
}

// FailImageInstalls makes every NVOS image install started from now on end
// in action_failed with msg as its issue, without touching the
// partitions; an empty msg clears the fault.
func (s *Switch) FailImageInstalls(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.imageFaults.installFailure = msg
	s.log.Info().Str("issue", msg).Msg("fault: fail image installs")
}

// LongImageReboots makes the reboot an NVOS image install ends with last
// d of wall-clock time instead of Config.RebootDuration (d <= 0 restores
// it), e.g. longer than the caller is willing to wait. Such a reboot
// starts when a client first reads the finished install action, so the
// hand-off is always seen before the switch goes away.
func (s *Switch) LongImageReboots(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.imageFaults.rebootFor = max(d, 0)
	s.log.Info().Dur("reboot_ms", d).Msg("fault: long image install reboots")
}

// ExpireAdminOnInstall switches Config.ExpirePasswordOnInstall on or off
// for the installs that finish from now on.
func (s *Switch) ExpireAdminOnInstall(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.imageFaults.expireAdmin = on
	s.log.Info().Bool("on", on).Msg("fault: expire admin password on image install")
}

// SetSystemImage installs builds on the two partitions out of band
// (an empty build leaves a partition empty) and makes partition current
// (1 or 2) both the running and the next one.
func (s *Switch) SetSystemImage(partition1, partition2 string, current int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if current != 2 {
		current = 1
	}
	s.partitions = [2]string{partition1, partition2}
	s.current, s.next = current, current
	s.log.Info().Str("partition1", partition1).Str("partition2", partition2).Int("current", current).Msg("fault: system image set")
}

// SystemImage reports the builds on the two partitions and the running
// and next partition numbers.
func (s *Switch) SystemImage() (partition1, partition2 string, current, next int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	return s.partitions[0], s.partitions[1], s.current, s.next
}

// imageRebootLocked schedules the reboot of an image install from from,
// or defers it to the read of the finished action when LongImageReboots
// is set.
func (s *Switch) imageRebootLocked(from time.Time, onBoot ...func()) {
	if s.imageFaults.rebootFor <= 0 {
		s.rebootLocked(from, onBoot...)
		return
	}
	s.imageFaults.deferred = append(s.imageFaults.deferred, onBoot)
}

// startDeferredRebootsLocked starts the long reboots deferred by
// imageRebootLocked, from now.
func (s *Switch) startDeferredRebootsLocked(now time.Time) {
	for _, onBoot := range s.imageFaults.deferred {
		s.outages = append(s.outages, &outage{from: now, until: now.Add(s.imageFaults.rebootFor), onBoot: onBoot})
		s.boots++
	}
	s.imageFaults.deferred = nil
}
