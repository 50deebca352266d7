package fwupdate

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nicflash"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// ProgressInBand begins the description of the in-band NIC stage, and
// ProgressInBandRecovery that of its recovery AC cycle.
const (
	ProgressInBand         = "Flashing in-band NIC firmware (Flint) on "
	ProgressInBandRecovery = "Recovery AC cycle before in-band NIC firmware on "
)

// errNoFlasher refuses in-band targets when rmsd was built without a
// Flint flasher (Deps.NIC nil).
var errNoFlasher = errors.New("in-band NIC firmware flashing is not configured in this rmsd")

// splitInBand separates the in-band NIC targets (CX7, CX8, BF3_NIC,
// flashed with Flint over the host) from the others, keeping order.
func splitInBand(ts []Target) (inBand, outOfBand []Target) {
	for _, t := range ts {
		if _, ok := nicflash.FamilyOf(t.Component); ok {
			inBand = append(inBand, t)
		} else {
			outOfBand = append(outOfBand, t)
		}
	}
	return inBand, outOfBand
}

// inBand is the Flint stage, run before any out-of-band target as upstream
// runs a GB200 compute node's update groups (update_firmware_group, then
// activate_firmware_with and ensure_gb200_host_os_ready): power the host on
// if it is off and wait for its OS, flash every in-band target over SSH,
// then, when the plan activates and something was flashed, power cycle
// the tray, wait for the OS again and check that every device runs its
// image's version. A failure here leaves the out-of-band targets alone.
func (r *run) inBand(ctx context.Context, targets []Target) *stepError {
	first := &targets[0]
	node := r.plan.Node.ID
	fail := func(phase, during string, err error) *stepError {
		return &stepError{phase: phase, during: during, target: first, err: err}
	}
	if r.deps.NIC == nil {
		return fail(phaseValidation, "before flashing in-band NIC firmware", errNoFlasher)
	}
	host := r.plan.Node.Host
	if host == nil || host.Credentials.Username == "" || host.Credentials.Password.IsZero() {
		return fail(phaseValidation, "before flashing in-band NIC firmware", fmt.Errorf(
			"%w: node %s: CX7, CX8 and BF3_NIC firmware is flashed with Flint over SSH to the host OS, which needs the node's host_endpoint with a username and password",
			nicflash.ErrNoHost, node))
	}
	images := make([]nicflash.Image, 0, len(targets))
	for _, t := range targets {
		fam, _ := nicflash.FamilyOf(t.Component)
		images = append(images, nicflash.Image{Family: fam, File: t.File})
	}
	r.job.Progress(ProgressInBand + node)
	if err := r.hostOn(ctx); err != nil {
		return fail(phaseUpdate, "while powering the host on for in-band NIC firmware", err)
	}
	// Upstream's boot gate and discovery retry: an OS that does not come
	// up, or devices that cannot be read before anything is burned, get
	// one aux AC cycle of the tray each, then one more try.
	if err := r.deps.NIC.WaitReady(ctx, *host); err != nil {
		if !errors.Is(err, nicflash.ErrNotReady) {
			return fail(phaseUpdate, "while waiting for the host OS of "+node, err)
		}
		if rerr := r.recoverHost(ctx, *host); rerr != nil {
			return fail(phaseUpdate, "while recovering the host OS of "+node, fmt.Errorf("%w; after one recovery AC cycle: %w", err, rerr))
		}
	}
	counts := r.deps.FlintProfiles[r.plan.Node.InventoryProfile]
	out, err := r.deps.NIC.Update(ctx, *host, images, r.plan.Force, counts)
	if errors.Is(err, nicflash.ErrDiscovery) {
		if rerr := r.recoverHost(ctx, *host); rerr != nil {
			return fail(phaseUpdate, "while recovering the host of "+node, fmt.Errorf("%w; recovery AC cycle: %w", err, rerr))
		}
		out, err = r.deps.NIC.Update(ctx, *host, images, r.plan.Force, counts)
	}
	if err != nil {
		return fail(phaseUpdate, "while flashing in-band NIC firmware on "+node, err)
	}
	flashed := map[string]bool{}
	for _, d := range out.Devices {
		if d.Status == nicflash.StatusFlashed {
			flashed[d.Component] = true
		}
	}
	for i := range targets {
		fam, _ := nicflash.FamilyOf(targets[i].Component)
		status := statusUpToDate
		if flashed[string(fam)] {
			status = statusCompleted
		}
		r.results = append(r.results, newTargetResult(&targets[i], status, ""))
	}
	if !out.Flashed() {
		return nil
	}
	r.pending = true
	if !r.plan.Activate {
		return nil
	}
	if se := r.activate(ctx, first); se != nil {
		return se
	}
	if err := r.deps.NIC.WaitReady(ctx, *host); err != nil {
		return fail(phaseVersionCheck, "while waiting for the host OS of "+node+" after activation", err)
	}
	if err := r.deps.NIC.Verify(ctx, *host, images, counts); err != nil {
		return fail(phaseVersionCheck, "during the in-band NIC version check", err)
	}
	r.nicVerified = true
	return nil
}

// recoverHost is upstream's single pre-flash recovery: an aux AC cycle of
// the tray (its BMC seen going down and back), the host powered on, its
// OS awaited.
func (r *run) recoverHost(ctx context.Context, host hw.Endpoint) error {
	r.job.Progress(ProgressInBandRecovery + r.plan.Node.ID)
	err := r.deps.Nodes.One(messages.ShieldFromShutdown(ctx), r.plan.Node, func(ctx context.Context, _ int, d platform.Device) error {
		if err := d.AuxPowerCycle(ctx); err != nil {
			return err
		}
		return d.SetPower(ctx, platform.PowerOn)
	})
	if err != nil {
		return err
	}
	return r.deps.NIC.WaitReady(ctx, host)
}

// hostOn powers the node's host on unless it is on already.
func (r *run) hostOn(ctx context.Context) error {
	return r.deps.Nodes.One(messages.ShieldFromShutdown(ctx), r.plan.Node, func(ctx context.Context, _ int, d platform.Device) error {
		s, err := d.PowerState(ctx)
		if err != nil || s == platform.PowerStateOn {
			return err
		}
		return d.SetPower(ctx, platform.PowerOn)
	})
}
