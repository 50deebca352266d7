package switchadmin

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// NVOS factory reset (southbound §3.10). The reset is asked for with the
// node's configured login; only when the switch refuses that login is it
// asked for again as admin/admin (an earlier attempt may have reset the
// switch already, but a working factory login alone does not prove it).
// The switch must then be seen going down, and the job ends once SSH
// authenticates admin/admin: connect only, no shell, so the forced password
// change stays unanswered and the factory password is kept.

// FactoryResetPlan resets Node to factory defaults.
type FactoryResetPlan struct {
	Node hw.Node
}

// Workflow returns the job workflow of the plan.
func (p FactoryResetPlan) Workflow(d Deps) messages.Workflow {
	d.Timing = d.Timing.withDefaults()
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		var configured hw.Credentials
		if p.Node.Host != nil {
			configured = p.Node.Host.Credentials
		}
		r := &run{node: p.Node, job: job, secrets: []hw.Secret{configured.Password}}
		login, err := p.reset(ctx, d, r, configured)
		if err != nil {
			r.fail(ctx, err)
			return
		}
		r.complete("Factory reset completed; the switch accepts the factory login", map[string]any{
			"phase": "factory_login_ready", "reset_login": login})
	})
}

// reset returns which login the reset was asked with ("configured" or
// "factory_default").
func (p FactoryResetPlan) reset(ctx context.Context, d Deps, r *run, configured hw.Credentials) (string, error) {
	r.progress("reset", "Starting the NVOS factory reset")
	login := "configured"
	err := d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error { return a.FactoryReset(ctx, configured) })
	if errors.Is(err, nvue.ErrUnauthorized) {
		login = "factory_default"
		r.progress("reset", "Configured login refused; starting the factory reset as admin")
		err = d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error { return a.FactoryReset(ctx, factoryLogin) })
		if errors.Is(err, nvue.ErrUnauthorized) {
			return "", fmt.Errorf("%w: the switch refused the configured login and admin/admin: %v", errCredentials, err)
		}
	}
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, d.Timing.ResetTimeout)
	defer cancel()
	r.progress("reboot", "Waiting for the switch to reboot")
	err = every(ctx, d.Timing.ResetPoll, d.Timing.ResetTimeout, func() (bool, error) {
		err := d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error { return a.LoginNVUE(ctx, factoryLogin) })
		if gone(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		return "", p.timedOut(err, "to go down")
	}
	r.progress("factory_login", "Waiting for the factory login over SSH")
	err = every(ctx, d.Timing.ResetPoll, d.Timing.ResetTimeout, func() (bool, error) {
		err := d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error { return a.LoginSSH(ctx, factoryLogin) })
		return err == nil, err
	})
	if err != nil {
		return "", p.timedOut(err, "to accept admin/admin over SSH")
	}
	return login, nil
}

// timedOut words a wait that ran out of the reset's time.
func (p FactoryResetPlan) timedOut(err error, what string) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: switch %s did not reboot and come back in time (%s): %v", errWaitTimeout, p.Node.ID, what, err)
	}
	return err
}

// gone reports an NVUE error of a switch that did not answer at all.
func gone(err error) bool {
	return errors.Is(err, nvue.ErrTransport) || errors.Is(err, nvue.ErrTimeout)
}
