package platform

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// Switch firmware follows upstream's NVUE path (southbound §3.7): the
// package is staged over SSH/SFTP under /host/fw-images/<component>/, NVUE
// @install turns it into an action whose id is the task id, and an NVUE
// power cycle activates it. The device keeps nothing between calls: the
// task is the switch's own action record.
//
// A task whose action hands off to a switch reboot (its status says
// "reboot", "offline during reboot" or "system is offline") is waited for
// inside FirmwareTask: the call returns Done only once it has seen NVUE
// go down and answer again, within SwitchRebootTiming.InstallTimeout
// (upstream's 4 min). A poll that lands while the switch is already down
// gets an NVUE transport error, which the caller retries like any failed
// task read; a switch that then never goes down again makes the next wait
// time out instead of passing on an unconfirmed reboot.

// fwImageDir is where NVOS looks for staged platform firmware files.
const fwImageDir = "/host/fw-images"

// firmwareProbePath is the resource probed to see a switch go down and up.
const firmwareProbePath = "/nvue_v1/platform/firmware"

// switchComponent matches the NVUE firmware components a package may
// target, lower case.
var switchComponent = regexp.MustCompile(`^(bmc|bios|fpga|erot|cpld|cpld[1-9][0-9]*)$`)

// stagedFileName matches the file names a switch stages (upstream's rule).
var stagedFileName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}$`)

// switchFirmwareTarget checks u before any I/O and returns the NVUE
// component (lower case), the staging directory and the staged file name.
func switchFirmwareTarget(u FirmwareUpdate) (component, dir, name string, err error) {
	component = strings.ToLower(u.Component)
	if !switchComponent.MatchString(component) {
		return "", "", "", fmt.Errorf("%w: switch component %q is not one of bmc, bios, cpld, cpld<N>, fpga, erot",
			ErrInvalidFirmwareUpdate, u.Component)
	}
	name = filepath.Base(u.FileName)
	if u.FileName == "" || !stagedFileName.MatchString(name) {
		return "", "", "", fmt.Errorf("%w: file name %q: only [A-Za-z0-9._-], no leading dot",
			ErrInvalidFirmwareUpdate, name)
	}
	if u.Body == nil {
		return "", "", "", fmt.Errorf("%w: no package body", ErrInvalidFirmwareUpdate)
	}
	return component, stagingDir(component), name, nil
}

// stagingDir is where NVOS looks for files of component (lower case):
// /host/fw-images/<component>, every cpld<N> sharing cpld.
func stagingDir(component string) string {
	if strings.HasPrefix(component, "cpld") {
		component = "cpld"
	}
	return fwImageDir + "/" + component
}

// StartFirmwareUpdate stages u on the switch host (mkdir -p, rm -f, SFTP
// upload) and starts NVUE @install with force false, as upstream always
// does (u.Force is ignored: on some NVOS builds a forced install reboots
// the switch unplanned). The task id is the NVUE action id.
func (s *switchDevice) StartFirmwareUpdate(ctx context.Context, u FirmwareUpdate) (UpdateStart, error) {
	if s.nvue == nil {
		return UpdateStart{}, unsupported(s.cfg.ID, s.cfg.Type, "firmware update without a host endpoint")
	}
	component, dir, name, err := switchFirmwareTarget(u)
	if err != nil {
		return UpdateStart{}, fmt.Errorf("firmware update of %s: %w", s.cfg.ID, err)
	}
	if err := s.stage(ctx, u, dir, name); err != nil {
		return UpdateStart{}, fmt.Errorf("firmware update of %s: %w", s.cfg.ID, err)
	}
	id, err := s.nvue.InstallFirmware(ctx, component, name)
	if err != nil {
		return UpdateStart{}, fmt.Errorf("firmware update of %s: %w", s.cfg.ID, err)
	}
	return UpdateStart{TaskID: id}, nil
}

// stage uploads u's body to <dir>/<name> on the switch host over one SSH
// connection, after making the directory and removing an older copy.
func (s *switchDevice) stage(ctx context.Context, u FirmwareUpdate, dir, name string) error {
	c, err := s.dialHost(ctx)
	if err != nil {
		return fmt.Errorf("stage %s: %w", name, err)
	}
	defer func() { _ = c.Close() }() // Close always succeeds
	remote := dir + "/" + name
	for _, cmd := range []string{"mkdir -p " + sshsftp.Quote(dir), "rm -f " + sshsftp.Quote(remote)} {
		if _, err := c.Run(ctx, cmd); err != nil {
			return fmt.Errorf("stage %s: %w", name, err)
		}
	}
	size := u.Size
	if size <= 0 {
		size = -1
	}
	if _, err := c.Upload(ctx, u.Body, remote, size); err != nil {
		return fmt.Errorf("stage %s: %w", name, err)
	}
	return nil
}

// dialHost opens one SSH connection to the switch host, with the
// platform's SSH options (port, host key policy, timeouts).
func (s *switchDevice) dialHost(ctx context.Context) (*sshsftp.Client, error) {
	return sshsftp.Dial(ctx, s.cfg.Host, s.ssh)
}

// FirmwareTask reads NVUE action id. An action that hands off to a reboot
// is waited for here (see the comment at the top of this file).
func (s *switchDevice) FirmwareTask(ctx context.Context, id string) (TaskStatus, error) {
	if s.nvue == nil {
		return TaskStatus{}, unsupported(s.cfg.ID, s.cfg.Type, "firmware task without a host endpoint")
	}
	st, err := s.nvue.Action(ctx, id)
	if err != nil {
		return TaskStatus{}, fmt.Errorf("firmware task %s of %s: %w", id, s.cfg.ID, err)
	}
	ts := TaskStatus{ID: id, State: st.State, Percent: st.Percent, Message: st.Message()}
	switch st.Phase() {
	case nvue.PhaseRunning:
		return ts, nil
	case nvue.PhaseFailed:
		ts.Done, ts.Failed = true, true
		return ts, nil
	case nvue.PhaseRebooting:
		t := s.reboot
		if err := s.nvue.WaitDownUp(ctx, firmwareProbePath, t.ProbeInterval, t.InstallTimeout); err != nil {
			return TaskStatus{}, fmt.Errorf("firmware task %s of %s: reboot: %w", id, s.cfg.ID, err)
		}
		ts.Message += " (switch rebooted)"
	}
	ts.Done, ts.Percent = true, 100
	return ts, nil
}

// ActivateFirmware power-cycles the switch through NVUE (@power-cycle),
// checks the action has not failed and waits for the switch to go down
// and come back, within SwitchRebootTiming.PowerCycleTimeout.
func (s *switchDevice) ActivateFirmware(ctx context.Context) error {
	if s.nvue == nil {
		return unsupported(s.cfg.ID, s.cfg.Type, "firmware activation without a host endpoint")
	}
	id, err := s.nvue.PowerCycle(ctx)
	if err != nil {
		return fmt.Errorf("activate firmware on %s: %w", s.cfg.ID, err)
	}
	st, err := s.nvue.Action(ctx, id)
	switch {
	case err == nil && st.Phase() == nvue.PhaseFailed:
		return fmt.Errorf("activate firmware on %s: power cycle: %w", s.cfg.ID, &nvue.ActionError{Status: st})
	case err != nil && !switchGone(err):
		return fmt.Errorf("activate firmware on %s: power cycle: %w", s.cfg.ID, err)
	}
	// An unreachable switch here is one already rebooting: the wait below
	// sees it down.
	t := s.reboot
	if err := s.nvue.WaitDownUp(ctx, firmwareProbePath, t.ProbeInterval, t.PowerCycleTimeout); err != nil {
		return fmt.Errorf("activate firmware on %s: %w", s.cfg.ID, err)
	}
	return nil
}

// switchGone reports an NVUE error of a switch that did not answer.
func switchGone(err error) bool {
	return errors.Is(err, nvue.ErrTransport) || errors.Is(err, nvue.ErrTimeout)
}
