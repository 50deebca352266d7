package nvossim

import (
	"encoding/json"
	"fmt"
	"path"
	"time"

	"github.com/rmsd/rmsd/hw"
)

// Fault knobs. Durations passed to these methods are wall-clock time (they
// are not multiplied by Config.TimeScale), so a test says exactly how long a
// window lasts.

// RejectLogins makes every NVUE request answer 401 and every SSH login fail
// while on is true, whatever the credentials.
func (s *Switch) RejectLogins(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejectLogins = on
	s.log.Info().Bool("on", on).Msg("fault: reject logins")
}

// SetPassword sets (or creates) a login account's password directly, as an
// operator on the console would. The password is never logged.
func (s *Switch) SetPassword(username string, password hw.Secret) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[username] = &user{password: password.Reveal()}
	s.log.Info().Str("user", username).Msg("fault: password set out of band")
}

// Unreachable makes NVUE and SSH drop every connection for d from now. A
// d <= 0 ends the windows opened by earlier Unreachable calls at once
// (reboot windows are not affected).
func (s *Switch) Unreachable(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if d <= 0 {
		for _, o := range s.outages {
			if o.manual && now.Before(o.until) {
				o.until = now
			}
		}
		s.log.Info().Msg("fault: reachable again")
		return
	}
	s.outages = append(s.outages, &outage{from: now, until: now.Add(d), manual: true})
	s.log.Info().Dur("for_ms", d).Msg("fault: unreachable")
}

// FailActions makes every action started from now on end in
// "action_failed" with msg as its issue; an empty msg clears the fault.
func (s *Switch) FailActions(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actionFailure = msg
	s.log.Info().Str("issue", msg).Msg("fault: fail actions")
}

// RebootInstalls makes firmware installs started from now on hand off to a
// switch reboot, as some NVOS builds do: the action ends in success with
// "system is offline during reboot", the switch goes down RebootDelay later
// and boots with its installed firmware active. false restores installs
// that wait for a power cycle.
func (s *Switch) RebootInstalls(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebootInstalls = on
	s.log.Info().Bool("on", on).Msg("fault: reboot on firmware install")
}

// SlowActions multiplies the duration of actions started from now on by
// factor (1 restores normal speed).
func (s *Switch) SlowActions(factor float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if factor <= 0 {
		factor = 1
	}
	s.actionSlowness = factor
	s.log.Info().Float64("factor", factor).Msg("fault: slow actions")
}

// FailRevisions makes every revision applied from now on end in state
// "invalid" with msg as its issue; an empty msg clears the fault.
func (s *Switch) FailRevisions(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revisionFail = msg
	s.log.Info().Str("issue", msg).Msg("fault: fail revisions")
}

// ExpirePassword marks a user's password as expired: NVUE answers 401 for
// it and SSH accepts the login only to force a password change on a PTY
// shell (exec and SFTP are refused), as NVOS does after a factory reset.
func (s *Switch) ExpirePassword(username string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u, ok := s.users[username]; ok {
		u.expired = true
	}
	s.log.Info().Str("user", username).Msg("fault: password expired")
}

// StallUploads makes SFTP writes block once a file has received afterBytes
// bytes, until ResumeUploads or Close; the transfer then looks hung to the
// client. afterBytes 0 stalls the first write.
func (s *Switch) StallUploads(afterBytes int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stallAfter = max(afterBytes, 0)
	s.log.Info().Int64("after_bytes", afterBytes).Msg("fault: stall uploads")
}

// ResumeUploads releases stalled SFTP writes and stops stalling new ones.
func (s *Switch) ResumeUploads() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stallAfter >= 0 {
		s.stallAfter = -1
		close(s.stallResume)
		s.stallResume = make(chan struct{})
	}
}

// SetChassisLocation makes GET /nvue_v1/platform/chassis-location answer
// raw (JSON text, e.g. `null`, `""`, `"x"`, `-1`, `4294967296`) for key
// (chassis-sn, slot-number, topology-id or tray-index) instead of the
// configured value; an empty raw leaves the key out of the answer.
func (s *Switch) SetChassisLocation(key string, raw json.RawMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.location == nil {
		s.location = map[string]json.RawMessage{}
	}
	s.location[key] = raw
	s.log.Info().Str("key", key).Str("raw", string(raw)).Msg("fault: chassis location value")
}

// Observations for tests and the rack simulator.

// NVUEConnections counts the connections the NVUE server accepted: each
// one cost its client a TLS handshake.
func (s *Switch) NVUEConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nvueConns
}

// SetFirmware makes the platform firmware component name (BMC, EROT, FPGA,
// BIOS, CPLD1, or a new one) run version, installed and actual, as if it had
// been flashed and activated out of band.
func (s *Switch) SetFirmware(name, version string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.firmware[name] = &component{actual: version, installed: version}
	s.log.Info().Str("component", name).Str("version", version).Msg("fault: firmware set out of band")
}

// NVUERequests counts the NVUE requests the switch answered while up,
// refused ones (401) included: a request counts once it reached NVOS.
func (s *Switch) NVUERequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nvueRequests
}

// Firmware returns the running version of every platform firmware
// component, by NVUE component name, as /nvue_v1/platform/firmware reports
// them.
func (s *Switch) Firmware() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	out := make(map[string]string, len(s.firmware))
	for name, c := range s.firmware {
		out[name] = c.actual
	}
	return out
}

func (s *Switch) countConnection() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nvueConns++
}

// Boots returns how many reboots have been scheduled (power cycles, image
// installs, factory resets).
func (s *Switch) Boots() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	return s.boots
}

// Saves returns how many times the configuration was saved.
func (s *Switch) Saves() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked(s.now())
	return s.saves
}

// File returns the content of a file of the simulated host and whether it
// exists.
func (s *Switch) File(path string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.fs.files[cleanPath(path)]
	if !ok {
		return nil, false
	}
	return append([]byte(nil), f.data...), true
}

// PutFile writes a file of the simulated host (mode 0644, parents
// created), as an operator copying it there would; path must lie in a
// writable tree (/host, /home, /tmp).
func (s *Switch) PutFile(p string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p = cleanPath(p)
	if err := s.fs.mkdirAll(path.Dir(p), 0o755); err != nil {
		return fmt.Errorf("nvossim: put %s: %w", p, err)
	}
	f, err := s.fs.create(p, 0o644, s.now())
	if err != nil {
		return fmt.Errorf("nvossim: put %s: %w", p, err)
	}
	f.data = append([]byte(nil), data...)
	return nil
}

// Reachable reports whether the switch currently accepts connections.
func (s *Switch) Reachable() bool { return !s.isDown() }

// PowerCycle is a power cycle driven from outside NVOS (the tray's BMC or
// an AC cycle): NVUE and SSH go down at once for down (wall-clock), then
// the switch boots with its installed firmware active.
func (s *Switch) PowerCycle(down time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.outages = append(s.outages, &outage{from: now, until: now.Add(down), onBoot: []func(){s.activateFirmwareLocked}})
	s.boots++
	s.log.Info().Dur("down_ms", down).Msg("power cycle from bmc")
}

// DelayResponses holds every NVUE answer for d (wall-clock) before sending
// it, to exercise client timeouts; 0 restores immediate answers.
func (s *Switch) DelayResponses(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responseDelay = d
	s.log.Info().Dur("delay_ms", d).Msg("fault: delay responses")
}
