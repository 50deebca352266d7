package switchadmin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// SDN factory default (southbound §3.10): the scale-up fabric's own reset,
// carried out by the fabric's primary switch (the one whose cluster is
// enabled; any other refuses it, which fails the job FailedPrecondition).
// It is idempotent, so a caller may simply ask again. Once the switch has
// accepted it, the fabric manager must report the reset over: its reason no
// longer says FACTORY RESET IN PROGRESS and its control plane is
// unconfigured (three readings in a row when the reset was never seen in
// progress), or the app is gone after it was seen in progress.

// Fabric manager readings that end the wait.
const (
	resetInProgress   = "FACTORY RESET IN PROGRESS"
	planeUnconfigured = "CONTROL_PLANE_STATE_UNCONFIGURED"
	// settledReadings is how many unconfigured readings in a row count as
	// done when the reset was never seen in progress.
	settledReadings = 3
)

// SDNResetPlan resets the scale-up fabric configuration of Node.
type SDNResetPlan struct {
	Node hw.Node
}

// Workflow returns the job workflow of the plan.
func (p SDNResetPlan) Workflow(d Deps) messages.Workflow {
	d.Timing = d.Timing.withDefaults()
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		r := &run{node: p.Node, job: job}
		if p.Node.Host != nil {
			r.secrets = []hw.Secret{p.Node.Host.Credentials.Password}
		}
		if err := p.reset(ctx, d, r); err != nil {
			r.fail(ctx, err)
			return
		}
		r.complete("SDN factory default completed; the fabric must be configured again", map[string]any{
			"phase": "fabric_manager_unconfigured"})
	})
}

func (p SDNResetPlan) reset(ctx context.Context, d Deps, r *run) error {
	r.progress("reset", "Starting the SDN factory default")
	err := d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error {
		return a.SDNFactoryReset(ctx, d.Timing.SDNActionTimeout)
	})
	var ae *nvue.ActionError
	if errors.As(err, &ae) && strings.Contains(strings.ToLower(ae.Error()), "cluster is not enabled") {
		return fmt.Errorf("%w: %v", errNotPrimary, err)
	}
	if err != nil {
		return err
	}
	r.progress("fabric_manager", "Waiting for the fabric manager to finish the reset")
	var w settleWatch
	err = every(ctx, d.Timing.SDNPoll, d.Timing.SDNTimeout, func() (bool, error) {
		var app nvue.ClusterApp
		err := d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) (err error) {
			app, err = a.NMXController(ctx)
			return err
		})
		if w.observe(app, err) {
			return true, nil
		}
		return false, err
	})
	if errors.Is(err, errWaitTimeout) {
		return fmt.Errorf("fabric manager of %s: %w", p.Node.ID, err)
	}
	return err
}

// settleWatch follows the fabric manager's readings after the reset.
type settleWatch struct {
	seenProgress bool
	unconfigured int
}

// observe takes one reading (err is the read's failure) and reports
// whether the reset is over.
func (w *settleWatch) observe(app nvue.ClusterApp, err error) bool {
	switch {
	case errors.Is(err, nvue.ErrNotFound):
		w.unconfigured = 0
		return w.seenProgress
	case err != nil:
		w.unconfigured = 0
		return false
	case strings.Contains(strings.ToUpper(app.Reason), resetInProgress):
		w.seenProgress, w.unconfigured = true, 0
		return false
	case strings.EqualFold(app.ControlPlane, planeUnconfigured):
		w.unconfigured++
		return w.seenProgress || w.unconfigured >= settledReadings
	default:
		w.unconfigured = 0
		return false
	}
}
