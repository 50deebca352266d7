package sim

import (
	"encoding/json"
	"fmt"
	"time"
)

// Fault knobs. Durations given to them are wall-clock time, not simulated
// time: a test says exactly how long a window lasts.

// SetCredentials changes the user name and password the device accepts;
// requests with anything else get 401.
func (d *Device) SetCredentials(user, password string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.user, d.pass = user, password
	d.log.Info().Str("user", user).Msg("fault: credentials changed")
}

// Unreachable closes the listener (connections are refused) for w, then
// the device comes back with its state intact, unless something else
// (a reboot, SetUnreachable, a lost rack power bus) still keeps it down.
func (d *Device) Unreachable(w time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stopLocked()
	if until := time.Now().Add(w); until.After(d.faultUntil) {
		d.faultUntil = until
	}
	d.log.Info().Dur("for_ms", w).Msg("fault: unreachable")
	d.afterLocked(w, func() {
		_ = d.serveIfReadyLocked(time.Now()) // logged there
	})
}

// SetUnreachable takes the device off the network until called with
// false. Released, the device listens again only if nothing else keeps it
// down (a reboot or Unreachable window in progress, no rack power); it
// then comes back when that ends.
func (d *Device) SetUnreachable(down bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.held = down
	if down {
		d.stopLocked()
		return nil
	}
	if err := d.serveIfReadyLocked(time.Now()); err != nil {
		return fmt.Errorf("bring %s back: %w", d.id, err)
	}
	return nil
}

// Reachable reports whether the device is listening.
func (d *Device) Reachable() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.up
}

// FailNextTasks makes the next n firmware tasks end in TaskState Exception.
func (d *Device) FailNextTasks(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failN = n
}

// FailAllTasks makes every firmware task from now on fail (or not).
func (d *Device) FailAllTasks(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failAll = on
}

// SlowTasks multiplies the duration of tasks created from now on (1 or 0
// restores normal speed).
func (d *Device) SlowTasks(factor float64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.slow = factor
}

// SetLatency delays every answer by w (0 turns it off); long enough, it
// makes client requests time out.
func (d *Device) SetLatency(w time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.latency = w
}

// SetPSU switches one PSU of a power shelf, as a failed or pulled supply
// would (FailPowerOn does not apply). A shelf with every PSU off stops
// feeding its rack's power bus.
func (d *Device) SetPSU(i int, on bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.isShelf() {
		return fmt.Errorf("set psu on %s: %w", d.id, ErrNotShelf)
	}
	if i < 0 || i >= len(d.state.psus) {
		return fmt.Errorf("set psu %d on %s: no such psu", i, d.id)
	}
	d.state.psus[i] = on
	d.feedChangedLocked()
	return nil
}

// SetWriteProtected turns the tray's hardware write protection on or off
// (Chassis_0 Oem.Nvidia.HardwareWriteProtectEnable).
func (d *Device) SetWriteProtected(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.wp = on
}

// SetBackgroundCopy sets Chassis_0's Oem.Nvidia.BackgroundCopyStatus, e.g.
// "InProgress"; "" restores "Completed".
func (d *Device) SetBackgroundCopy(status string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bgCopy = status
}

// ShelfHandoffTasks makes a power shelf end staged (ApplyTime OnReset)
// updates in the LiteOn hand-off shape (TaskState Cancelled, TaskStatus
// Warning, 100 %, TaskAborted) instead of Completed.
func (d *Device) ShelfHandoffTasks(on bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.handoff = on
}

// SetTopology makes a compute tray's processors report raw (JSON text,
// e.g. `null`, `""`, `"x"`, `-1`, `4294967296`) for key (ChassisSerialNumber,
// TraySlotNumber or TraySlotIndex) of Oem.Nvidia.MNNVLinkTopology instead
// of the tray's real place; an empty raw leaves the key out.
func (d *Device) SetTopology(key string, raw json.RawMessage) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.topology == nil {
		d.topology = map[string]json.RawMessage{}
	}
	d.topology[key] = raw
	d.log.Info().Str("key", key).Str("raw", string(raw)).Msg("fault: topology value")
}

// SetFirmware makes a component's installed version version, as if the
// device had been flashed out of band; what is staged stays staged.
func (d *Device) SetFirmware(id, version string) error {
	d.lockNow()
	defer d.mu.Unlock()
	c := d.state.components[id]
	if c == nil {
		return fmt.Errorf("set firmware %s on %s: %w", id, d.id, ErrUnknownComponent)
	}
	c.installed = version
	d.log.Info().Str("component", id).Str("version", version).Msg("fault: firmware set out of band")
	return nil
}

// Observations.

// PowerState returns the Redfish power state (System_0, or the shelf's
// aggregate).
func (d *Device) PowerState() string {
	d.lockNow()
	defer d.mu.Unlock()
	if d.isShelf() {
		return d.shelfPowerLocked()
	}
	return d.state.power
}

// Resets returns every reset/power action the device accepted, oldest
// first (e.g. "GracefulShutdown", "AuxPowerCycle", "BMC_0:GracefulRestart",
// "Chassis.On:On").
func (d *Device) Resets() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.state.resets...)
}

// Firmware returns the installed and staged ("" = none) version of a
// component.
func (d *Device) Firmware(id string) (installed, staged string, err error) {
	d.lockNow()
	defer d.mu.Unlock()
	c := d.state.components[id]
	if c == nil {
		return "", "", fmt.Errorf("component %s on %s: %w", id, d.id, ErrUnknownComponent)
	}
	return c.installed, c.staged, nil
}

// Components lists the firmware component ids in inventory order.
func (d *Device) Components() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.state.order...)
}

// Boots counts the reboots (resets, aux power cycles, immediate installs)
// the device has gone through; fault windows do not count.
func (d *Device) Boots() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.boots
}

// Requests counts the Redfish requests the device received while
// listening, whatever it answered (a 401 included).
func (d *Device) Requests() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.requests
}

// Uploads counts accepted firmware uploads.
func (d *Device) Uploads() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state.uploads
}

// ApplyTime returns a power shelf's HttpPushUriApplyTime.
func (d *Device) ApplyTime() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state.applyTime
}
