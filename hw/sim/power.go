package sim

import (
	"fmt"
	"sync"
	"time"
)

// The rack power bus.
//
// A rack's power shelves feed its compute and switch trays. While at least
// one shelf has a PSU switched on the bus is live. When the last shelf goes
// off the trays ride on their hold-up capacitance for Timing.Discharge and
// then go dark: BMCs stop answering (a connection gets neither a reply nor
// a refusal: see dark.go), NVOS hosts go down, systems are Off and
// unfinished firmware tasks end in Exception. If a shelf comes back before
// the discharge is over nothing happens to the trays. When a shelf comes
// back after it, every tray cold-boots: its BMC is unreachable for
// Timing.BMCReboot and returns with everything it had staged active (an AC
// cycle is also an aux power cycle); compute systems stay Off, switch trays
// power their NVOS host on by themselves, which answers after
// Timing.HostReboot. The shelves' own controllers run from the facility
// feed and are never affected.
//
// A device listens only when all of these hold: it has power, it is not
// booting (cold boot, manager reset, aux power cycle), it is not held down
// by SetUnreachable(true) and no Unreachable window is open. Whichever of
// them ends last brings it back; a reboot that was pending when power was
// lost is forgotten.

// bus is the power bus of one rack. Lock order: shelf Device.mu, then
// bus.mu, then tray Device.mu.
type bus struct {
	mu      sync.Mutex
	feeding []bool    // per shelf (by Device.index): some PSU is on
	trays   []*Device // compute trays and switch trays
}

// live reports whether some shelf feeds the bus. Caller holds b.mu.
func (b *bus) liveLocked() bool {
	for _, on := range b.feeding {
		if on {
			return true
		}
	}
	return false
}

// setFeed records whether shelf i feeds the bus and tells the trays when
// the bus goes dead or live.
func (b *bus) setFeed(i int, on bool, discharge time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	was := b.liveLocked()
	b.feeding[i] = on
	now := b.liveLocked()
	if was == now {
		return
	}
	for _, t := range b.trays {
		if now {
			t.feedRestored()
		} else {
			t.feedLost(discharge)
		}
	}
}

// feedChangedLocked reports the shelf's output to its rack's bus after its
// PSUs changed. Caller holds d.mu (a shelf).
func (d *Device) feedChangedLocked() {
	if d.bus == nil {
		return
	}
	on := false
	for _, psu := range d.state.psus {
		on = on || psu
	}
	d.bus.setFeed(d.index, on, d.opts.scale(d.opts.Timing.Discharge))
}

// feedLost starts the discharge of a tray whose bus went dead.
func (d *Device) feedLost(discharge time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.feedGen++
	if !d.powered {
		return
	}
	gen := d.feedGen
	d.discharging = true
	d.log.Info().Dur("discharge_ms", discharge).Msg("rack power bus dead, discharging")
	d.afterLocked(discharge, func() {
		if d.feedGen == gen {
			d.darkLocked()
		}
	})
}

// feedRestored handles the bus coming back: it cancels a discharge in
// progress or cold-boots a dark tray.
func (d *Device) feedRestored() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.feedGen++ // a pending discharge timer is now stale
	if d.discharging {
		d.discharging = false
		d.log.Info().Msg("rack power back before the trays discharged")
		return
	}
	if !d.powered && !d.closing {
		d.coldBootLocked(time.Now())
	}
}

// darkLocked cuts the tray's power. Caller holds d.mu.
func (d *Device) darkLocked() {
	now := time.Now()
	d.settleLocked(now)
	d.powered, d.discharging = false, false
	d.epoch++ // pending reboots and boots are void
	d.bootUntil = time.Time{}
	d.stopLocked()
	d.silenceLocked() // no power: nothing answers, not even a refusal
	d.state.power, d.state.powerTarget = stateOff, ""
	for _, t := range d.state.tasks {
		if !t.settled && now.Before(t.end) {
			t.fail, t.end = true, now
		}
	}
	if d.host != nil {
		d.host.PowerOff()
	}
	d.log.Info().Msg("tray lost power")
}

// coldBootLocked powers a dark tray up again. Caller holds d.mu.
func (d *Device) coldBootLocked(now time.Time) {
	d.unsilenceLocked() // a booting BMC's network stack refuses until it serves
	d.powered = true
	d.epoch++
	d.boots++
	boot := d.opts.scale(d.opts.Timing.BMCReboot)
	d.bootUntil = now.Add(boot)
	if d.host != nil {
		d.host.PowerOn(d.opts.scale(d.opts.Timing.HostReboot))
	}
	epoch := d.epoch
	d.log.Info().Dur("boot_ms", boot).Msg("tray power restored, cold boot")
	d.afterLocked(boot, func() {
		if d.epoch != epoch {
			return
		}
		d.activateLocked(nil)
		if d.kind == kindSwitchBMC {
			// Switch trays power their host on by themselves on AC
			// restore; compute trays wait for a power-on request.
			d.state.power = stateOn
		}
		d.serveIfReadyLocked(time.Now())
	})
}

// serveIfReadyLocked starts listening when nothing keeps the device down.
// Caller holds d.mu.
func (d *Device) serveIfReadyLocked(now time.Time) error {
	if d.held || !d.powered || now.Before(d.faultUntil) || now.Before(d.bootUntil) {
		return nil
	}
	if err := d.startLocked(); err != nil {
		d.log.Error().Err(err).Msg("device failed to come back")
		return err
	}
	return nil
}

// Powered reports whether the device has power: trays lose it when their
// rack's shelves are all off and discharged; shelves always have it.
func (d *Device) Powered() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.powered
}

// FailPowerOn makes a power shelf accept its power-on actions (2xx) but
// leave its PSUs off, as a shelf that never comes back would.
func (d *Device) FailPowerOn(on bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.isShelf() {
		return fmt.Errorf("fail power on %s: %w", d.id, ErrNotShelf)
	}
	d.failPowerOn = on
	d.log.Info().Bool("on", on).Msg("fault: power-on actions ignored")
	return nil
}

// Fed reports whether some power shelf of the rack has a PSU on (a rack
// without shelves counts as fed).
func (r *Rack) Fed() bool {
	if r.bus == nil || len(r.bus.feeding) == 0 {
		return true
	}
	r.bus.mu.Lock()
	defer r.bus.mu.Unlock()
	return r.bus.liveLocked()
}

// Powered reports whether every compute and switch tray of the rack has
// power (their BMCs may still be booting).
func (r *Rack) Powered() bool {
	for _, d := range r.Devices {
		if !d.Powered() {
			return false
		}
	}
	return true
}

// Dark reports whether every compute and switch tray of the rack has lost
// power.
func (r *Rack) Dark() bool {
	dark := false
	for _, d := range r.Devices {
		if d.isShelf() {
			continue
		}
		if d.Powered() {
			return false
		}
		dark = true
	}
	return dark
}
