package sim

import (
	"time"
)

// Redfish power states the simulator reports.
const (
	stateOn          = "On"
	stateOff         = "Off"
	statePoweringOn  = "PoweringOn"
	statePoweringOff = "PoweringOff"
)

// deviceState is everything a device remembers. It is guarded by Device.mu
// and advanced lazily by settleLocked.
type deviceState struct {
	power       string    // current system (or shelf) power state
	powerTarget string    // state reached at powerAt, "" = none pending
	powerAt     time.Time //
	components  map[string]*component
	order       []string // component ids in inventory order
	tasks       map[string]*task
	taskOrder   []string
	nextTask    int
	applyTime   string // power shelves: HttpPushUriApplyTime
	psus        []bool // power shelves: PSU on/off
	resets      []string
	uploads     int
}

// component is one firmware component.
type component struct {
	id         string
	name       string
	softwareID string
	installed  string
	staged     string // "" = nothing staged
}

// task is one firmware task; its state is a function of time.
type task struct {
	id       string
	start    time.Time
	end      time.Time
	fail     bool
	settled  bool
	targets  []string
	version  string
	activate string // "now" = goes live when done; "" = staged until a reset
	handoff  bool   // render a finished task as the LiteOn OnReset hand-off
}

func (s *deviceState) addComponent(id, name, swID, version string) {
	s.components[id] = &component{id: id, name: name, softwareID: swID, installed: version}
	s.order = append(s.order, id)
}

// settleLocked advances time-driven state to now.
func (d *Device) settleLocked(now time.Time) {
	s := &d.state
	if s.powerTarget != "" && !now.Before(s.powerAt) {
		s.power, s.powerTarget = s.powerTarget, ""
	}
	for _, id := range s.taskOrder {
		t := s.tasks[id]
		if t.settled || now.Before(t.end) {
			continue
		}
		t.settled = true
		if t.fail {
			d.log.Info().Str("task", t.id).Msg("firmware task failed (fault)")
			continue
		}
		for _, cid := range t.targets {
			if c := s.components[cid]; c != nil {
				c.staged = t.version
			}
		}
		if t.activate == "now" {
			d.activateLocked(t.targets)
		}
	}
}

// activateLocked makes staged firmware of the given components (all when
// ids is nil) the installed version.
func (d *Device) activateLocked(ids []string) {
	s := &d.state
	if ids == nil {
		ids = s.order
		if d.nic != nil { // the whole tray cycled: its adapters load their flash
			d.nic.Activate()
		}
	}
	for _, id := range ids {
		if c := s.components[id]; c != nil && c.staged != "" {
			d.log.Info().Str("component", id).Str("version", c.staged).Msg("firmware activated")
			c.installed, c.staged = c.staged, ""
		}
	}
}

// setPowerLocked moves the power state, through a transitional state when
// the transition takes time.
func (d *Device) setPowerLocked(now time.Time, target string, transition time.Duration) {
	s := &d.state
	if transition <= 0 || s.power == target {
		s.power, s.powerTarget = target, ""
		return
	}
	if target == stateOn {
		s.power = statePoweringOn
	} else {
		s.power = statePoweringOff
	}
	s.powerTarget, s.powerAt = target, now.Add(transition)
}
