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

// Password rotation (southbound §3.9). The node's host credentials are the
// current login and the plan's password the next one, so a rotation that
// stopped half-way is finished by asking for it again:
//
//   - the current login works: rotate through an NVUE revision (for the
//     login's own user, the revision is followed with the new password),
//     outcome "rotated"; when the next password is the current one, only
//     save, outcome "resumed";
//   - the current login is refused and the user is the login's own: the
//     next password works, so an earlier rotation applied without being
//     saved: save, outcome "resumed"; it is refused too and the user is
//     admin: the switch came back from a factory reset or an image install
//     with admin/admin expired, so answer the forced password change over
//     SSH and log in with the next password, outcome
//     "recovered_factory_default";
//   - anything else fails, naming the user and never a password.

// factoryLogin is the login of a switch fresh from a factory reset.
var factoryLogin = hw.UserPass("admin", "admin")

// Outcomes of a rotation, in its result document.
const (
	OutcomeRotated   = "rotated"
	OutcomeResumed   = "resumed"
	OutcomeRecovered = "recovered_factory_default"
)

// PasswordPlan rotates User's password on Node to Password.
type PasswordPlan struct {
	Node     hw.Node
	User     string
	Password hw.Secret
}

// Workflow returns the job workflow of the plan.
func (p PasswordPlan) Workflow(d Deps) messages.Workflow {
	d.Timing = d.Timing.withDefaults()
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		var current hw.Credentials
		if p.Node.Host != nil {
			current = p.Node.Host.Credentials
		}
		r := &run{node: p.Node, job: job, secrets: []hw.Secret{p.Password, current.Password}}
		outcome, err := p.rotate(ctx, d, r, current)
		if err != nil {
			r.fail(ctx, err)
			return
		}
		r.complete("Password of "+p.User+" "+outcomeWords(outcome), map[string]any{
			"phase": "password_update_persisted", "username": p.User, "outcome": outcome})
	})
}

func outcomeWords(outcome string) string {
	switch outcome {
	case OutcomeResumed:
		return "saved (an earlier rotation had applied it)"
	case OutcomeRecovered:
		return "set on the expired factory login"
	default:
		return "rotated"
	}
}

func (p PasswordPlan) rotate(ctx context.Context, d Deps, r *run, current hw.Credentials) (string, error) {
	next := hw.Credentials{Username: p.User, Password: p.Password}
	own := p.User == current.Username
	same := own && p.Password.Reveal() == current.Password.Reveal()
	r.progress("probe", "Checking the configured login of "+current.Username)
	err := d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error { return a.LoginNVUE(ctx, current) })
	switch {
	case err == nil && same:
		return OutcomeResumed, p.save(ctx, d, r, current)
	case err == nil:
		r.progress("rotate", "Rotating the password of "+p.User)
		err := d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error {
			return a.RotatePassword(ctx, current, p.User, p.Password)
		})
		return OutcomeRotated, err
	case !errors.Is(err, nvue.ErrUnauthorized):
		return "", err
	case !own:
		return "", fmt.Errorf("%w: the switch refused the configured login of %s", errCredentials, current.Username)
	}
	if !same {
		r.progress("resume", "Configured login refused; trying the requested password of "+p.User)
		err = d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error { return a.LoginNVUE(ctx, next) })
		if err == nil {
			return OutcomeResumed, p.save(ctx, d, r, next)
		}
		if !errors.Is(err, nvue.ErrUnauthorized) {
			return "", err
		}
	}
	if p.User != factoryLogin.Username {
		return "", fmt.Errorf("%w: the switch refused both the configured and the requested password of %s", errCredentials, p.User)
	}
	return OutcomeRecovered, p.recover(ctx, d, r, next)
}

// save persists the running configuration as cred.
func (p PasswordPlan) save(ctx context.Context, d Deps, r *run, cred hw.Credentials) error {
	r.progress("save", "Saving the configuration with the password of "+p.User)
	return d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error { return a.SaveConfig(ctx, cred) })
}

// recover answers the forced password change of the expired factory login
// over SSH, then waits until the new password logs in over SSH and NVUE.
func (p PasswordPlan) recover(ctx context.Context, d Deps, r *run, next hw.Credentials) error {
	r.progress("recover", "Changing the expired factory password of admin over SSH")
	err := d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error {
		return a.ChangeExpiredPassword(ctx, factoryLogin, p.Password)
	})
	if err != nil {
		return err
	}
	r.progress("verify", "Logging in as admin with the new password")
	return every(ctx, d.Timing.LoginRetry, d.Timing.LoginTimeout, func() (bool, error) {
		err := d.step(ctx, p.Node, func(ctx context.Context, a platform.SwitchAdmin) error {
			if err := a.LoginSSH(ctx, next); err != nil {
				return err
			}
			return a.LoginNVUE(ctx, next)
		})
		return err == nil || ctx.Err() != nil, err
	})
}
