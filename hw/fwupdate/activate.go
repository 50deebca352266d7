package fwupdate

import (
	"github.com/rmsd/rmsd/hw/pause"

	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// What the post-activation version check concluded.
const (
	checkPassed     = "passed"
	checkUnverified = "unverified"
	checkSkipped    = "skipped"
)

// errVersionMismatch marks a node that does not run a flashed version
// after activation.
var errVersionMismatch = errors.New("post-activation version check failed")

// activate performs the platform's activation in one node operation (it
// returns when the device is back). after is the target whose flash it
// activates, named should it fail.
func (r *run) activate(ctx context.Context, after *Target) *stepError {
	node := r.plan.Node.ID
	if err := ctx.Err(); err != nil {
		return &stepError{phase: phaseActivation, during: "before activating firmware on " + node, target: after, err: err}
	}
	r.job.Progress(ProgressActivating + node)
	err := r.deps.Nodes.One(messages.ShieldFromShutdown(ctx), r.plan.Node, func(ctx context.Context, _ int, d platform.Device) error {
		return d.ActivateFirmware(ctx)
	})
	if err != nil {
		return &stepError{phase: phaseActivation, during: "while activating firmware on " + node, target: after, err: err}
	}
	r.activations++
	r.pending = false
	return nil
}

// verify is the post-activation version check: after VersionCheckDelay,
// up to VersionCheckAttempts reads of the inventory, VersionCheckInterval
// apart, until every flashed target that has a version runs it (see
// entriesFor for which entries stand for a target). Without an activation
// there is nothing to check ("skipped"); without a flashed target that
// has a version nothing can be ("unverified").
func (r *run) verify(ctx context.Context) (string, *stepError) {
	if r.activations == 0 {
		return checkSkipped, nil
	}
	var want []*Target
	for i := range r.flashed {
		if r.flashed[i].Version != "" {
			want = append(want, &r.flashed[i])
		}
	}
	if len(want) == 0 {
		if r.nicVerified {
			return checkPassed, nil
		}
		return checkUnverified, nil
	}
	during := "during the post-activation version check"
	if err := ctx.Err(); err != nil {
		return "", &stepError{phase: phaseVersionCheck, during: "before the post-activation version check", err: err}
	}
	if err := pause.For(ctx, r.t.VersionCheckDelay); err != nil {
		return "", &stepError{phase: phaseVersionCheck, during: during, err: err}
	}
	var last error
	var off *Target
	for attempt := 1; ; attempt++ {
		inv, err := r.inventory(ctx)
		switch {
		case err != nil:
			last, off = err, nil
		default:
			off = nil
			for _, t := range want {
				if entries := entriesFor(*t, inv); !runs(entries, t.Version) {
					off = t
					last = fmt.Errorf("%w: component %s expected version %s, installed %s", errVersionMismatch,
						t.label(), t.Version, installed(entries))
					break
				}
			}
			if off == nil {
				return checkPassed, nil
			}
		}
		if ctx.Err() != nil || attempt >= r.t.VersionCheckAttempts {
			break
		}
		if err := pause.For(ctx, r.t.VersionCheckInterval); err != nil {
			break
		}
	}
	return "", &stepError{phase: phaseVersionCheck, during: during, target: off,
		err: fmt.Errorf("after %d attempts: %w", r.t.VersionCheckAttempts, last)}
}
