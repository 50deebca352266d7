package nvossim

import (
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// user is one NVOS login account.
type user struct {
	password string
	expired  bool // the password must be changed over an SSH PTY first
}

// component is one platform firmware component.
type component struct {
	actual    string // running version
	installed string // version that becomes actual at the next power cycle
}

// Action states reported by /nvue_v1/action/<id>.
const (
	stateRunning = "action_running"
	stateSuccess = "action_success"
	stateError   = "action_error"
	stateFailed  = "action_failed"
)

// action is one asynchronous NVUE action. Its progress is computed from the
// clock; its effect runs once, when the simulator first observes it done.
type action struct {
	id       int
	start    time.Time
	end      time.Time
	running  string // status text while running
	done     string // status text on success
	state    string // final state, set when finished
	failMsg  string // non-empty: the action ends in action_failed with this issue
	finished bool
	// effect applies the action's result at time end; it may return a
	// failure message (the action then fails) and may schedule a reboot.
	effect func(end time.Time) string
	issues []string
}

// outage is a window during which NVUE and SSH are unreachable, with the
// state changes of the boot that ends it.
type outage struct {
	from, until time.Time
	booted      bool
	manual      bool // opened by the Unreachable fault, not a reboot
	onBoot      []func()
}

// revision is a staged NVUE configuration change set.
type revision struct {
	id        string
	state     string // pending, applying, applied, invalid, failed
	applyEnd  time.Time
	applyFail string
	passwords map[string]string // user -> new password
	patches   map[string]any    // other staged paths, kept for inspection
	nodes     map[string]string // cluster node interface -> staged address ("" clears)
	issue     string
}

// advanceLocked brings the lazily computed state up to now: finishes due
// actions, applies due revisions and runs the boot effects of outages that
// have ended. Callers hold s.mu.
func (s *Switch) advanceLocked(now time.Time) {
	for changed := true; changed; {
		changed = false
		if a := s.nextDueActionLocked(now); a != nil {
			s.finishAction(a)
			changed = true
		}
		for _, o := range s.outages {
			if !o.booted && !now.Before(o.until) {
				o.booted = true
				for _, f := range o.onBoot {
					f()
				}
				changed = true
			}
		}
		for _, r := range s.revisions {
			if r.state == "applying" && !now.Before(r.applyEnd) {
				s.finishRevision(r)
				changed = true
			}
		}
	}
	// Forget outages that ended long ago.
	kept := s.outages[:0]
	for _, o := range s.outages {
		if !o.booted || now.Sub(o.until) < time.Minute {
			kept = append(kept, o)
		}
	}
	s.outages = kept
}

// nextDueActionLocked removes and returns the earliest-ending running
// action that is due at now, or nil.
func (s *Switch) nextDueActionLocked(now time.Time) *action {
	best := -1
	for i, a := range s.running {
		if !now.Before(a.end) && (best < 0 || a.end.Before(s.running[best].end)) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	a := s.running[best]
	s.running = append(s.running[:best], s.running[best+1:]...)
	return a
}

func (s *Switch) finishAction(a *action) {
	a.finished = true
	if a.failMsg != "" {
		a.state = stateFailed
		a.issues = append(a.issues, a.failMsg)
		return
	}
	if a.effect != nil {
		if msg := a.effect(a.end); msg != "" {
			a.state = stateError
			a.issues = append(a.issues, msg)
			return
		}
	}
	a.state = stateSuccess
}

// downLocked reports whether the switch is unreachable at now.
func (s *Switch) downLocked(now time.Time) bool {
	for _, o := range s.outages {
		if !now.Before(o.from) && now.Before(o.until) {
			return true
		}
	}
	return false
}

// rebootLocked schedules a reboot starting at from; onBoot runs when it is
// back up.
func (s *Switch) rebootLocked(from time.Time, onBoot ...func()) {
	s.outages = append(s.outages, &outage{
		from:   from,
		until:  from.Add(s.cfg.scale(s.cfg.RebootDuration)),
		onBoot: onBoot,
	})
	s.boots++
}

// startActionLocked registers a new action lasting d of simulated time.
func (s *Switch) startActionLocked(now time.Time, d time.Duration, running, done string, effect func(end time.Time) string) *action {
	s.nextAction++
	a := &action{
		id:      s.nextAction,
		start:   now,
		end:     now.Add(time.Duration(float64(s.cfg.scale(d)) * s.actionSlowness)),
		running: running,
		done:    done,
		effect:  effect,
		failMsg: s.actionFailure,
	}
	s.actions[a.id] = a
	s.running = append(s.running, a)
	return a
}

// actionView is the JSON body of GET /nvue_v1/action/<id>.
func (a *action) view(now time.Time) map[string]any {
	issues := map[string]any{}
	for i, m := range a.issues {
		issues[strconv.Itoa(i)] = map[string]any{"message": m}
	}
	out := map[string]any{"id": a.id, "detail": "", "issue": issues, "http-status": 200}
	if !a.finished {
		pct := 0
		if total := a.end.Sub(a.start); total > 0 {
			pct = int(100 * now.Sub(a.start) / total)
		}
		out["state"], out["status"], out["percentage"] = stateRunning, a.running, min(pct, 99)
		return out
	}
	out["state"] = a.state
	switch a.state {
	case stateSuccess:
		out["status"], out["percentage"] = a.done, 100
	default:
		out["status"], out["percentage"] = "Action failed", 0
		out["http-status"] = 500
		if len(a.issues) > 0 {
			out["detail"] = a.issues[len(a.issues)-1]
		}
	}
	return out
}

// partitionBuild returns the build id of partition n (1 or 2).
func (s *Switch) partitionBuild(n int) string { return s.partitions[n-1] }

// fwDir returns the staging directory for a firmware component.
func fwDir(comp string) string {
	c := strings.ToLower(comp)
	if strings.HasPrefix(c, "cpld") {
		c = "cpld"
	}
	return FWImageDir + "/" + c
}

var versionPattern = regexp.MustCompile(`\d+(?:\.\d+)+`)

// PackageMagic starts a simulator firmware package that names its version
// in its first line, "SIMFW <version>\n" (hw/sim.FirmwarePackage writes
// them; simulated BMCs read the same header).
const PackageMagic = "SIMFW "

// packageVersion is the version a staged package carries: its header's,
// else its name's (versionFromFile).
func (fs *memFS) packageVersion(p string) string {
	if f, ok := fs.files[p]; ok && strings.HasPrefix(string(f.data[:min(len(f.data), 128)]), PackageMagic) {
		v := strings.TrimPrefix(string(f.data[:min(len(f.data), 128)]), PackageMagic)
		if i := strings.IndexAny(v, " \r\n\t"); i >= 0 {
			v = v[:i]
		}
		if v != "" {
			return v
		}
	}
	return versionFromFile(path.Base(p))
}

// versionFromFile derives the version a firmware or image file carries
// from its name: the first dotted number ("nvos-amd64-25.02.2553.bin" →
// "25.02.2553"), else the name without extension.
func versionFromFile(name string) string {
	if v := versionPattern.FindString(name); v != "" {
		return v
	}
	if i := strings.LastIndex(name, "."); i > 0 {
		return name[:i]
	}
	return name
}
