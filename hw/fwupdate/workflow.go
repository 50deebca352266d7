package fwupdate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/rmsd/rmsd/messages"
)

// The phases a failed update names in result_json.
const (
	phaseValidation   = "validation"
	phaseUpdate       = "update"
	phasePoll         = "poll"
	phaseActivation   = "activation"
	phaseVersionCheck = "post_activation_version_check"
	phaseCancelled    = "cancelled"
)

// errNoTargets refuses a plan with nothing to flash.
var errNoTargets = errors.New("firmware update plan has no targets")

// Workflow returns the update of p.Node as a job workflow. The job engine
// holds the node for the job's whole life; every device call goes through
// d.Nodes as one short operation, so a long flash holds none of the
// runner's slots while it waits.
//
// Cancellation is checked before each target, before each activation and
// before the post-activation version check, and ends any wait at once; a
// cancelled job is Failed with phase "cancelled". An activation, once
// started, runs on messages.ShieldFromShutdown: the start of an rmsd
// shutdown does not abandon a node powered off half-way (a hard stop
// still does).
func (p Plan) Workflow(d Deps) messages.Workflow {
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		r := &run{plan: p, deps: d, t: d.Timing.withDefaults(p.Node.Type.Kind()), job: job}
		r.execute(ctx)
	})
}

// run is one execution of a plan.
type run struct {
	plan Plan
	deps Deps
	t    Timing
	job  messages.Reporter

	results []targetResult
	// flashed are the targets uploaded and finished, in order.
	flashed []Target
	// pending is set when a target was flashed since the last activation.
	pending     bool
	activations int
	// nicVerified is set once the in-band NIC stage checked its versions.
	nicVerified bool
}

// stepError is why an update stopped.
type stepError struct {
	phase string
	// during completes "firmware update job cancelled ..." should the job
	// turn out to have been cancelled, e.g. "while polling firmware task 3
	// for target BMC".
	during string
	target *Target // nil when the failure concerns no one target
	err    error
}

func (r *run) execute(ctx context.Context) {
	if len(r.plan.Targets) == 0 {
		r.fail(ctx, &stepError{phase: phaseValidation, during: "before starting", err: errNoTargets})
		return
	}
	inBand, outOfBand := splitInBand(r.plan.Targets)
	if len(inBand) > 0 {
		if se := r.inBand(ctx, inBand); se != nil {
			r.fail(ctx, se)
			return
		}
	}
	for i := range outOfBand {
		t := &outOfBand[i]
		if err := ctx.Err(); err != nil {
			r.fail(ctx, &stepError{phase: phaseUpdate, during: "before starting the next target", target: t, err: err})
			return
		}
		if se := r.update(ctx, t); se != nil {
			r.fail(ctx, se)
			return
		}
		if r.plan.Activate && t.ActivateAfter && r.pending {
			if se := r.activate(ctx, t); se != nil {
				r.fail(ctx, se)
				return
			}
		}
	}
	if r.plan.Activate && r.pending {
		if se := r.activate(ctx, &r.flashed[len(r.flashed)-1]); se != nil {
			r.fail(ctx, se)
			return
		}
	}
	check, se := r.verify(ctx)
	if se != nil {
		r.fail(ctx, se)
		return
	}
	r.complete(check)
}

// update brings one target up to date: skipped when the node already runs
// its version, else uploaded and followed to the end of its task.
func (r *run) update(ctx context.Context, t *Target) *stepError {
	current, se := r.current(ctx, t)
	if se != nil {
		return se
	}
	if current {
		r.results = append(r.results, newTargetResult(t, statusUpToDate, ""))
		return nil
	}
	start, se := r.upload(ctx, t)
	if se != nil {
		return se
	}
	if start.Skipped {
		r.results = append(r.results, newTargetResult(t, statusUpToDate, ""))
		return nil
	}
	if se := r.poll(ctx, t, start.TaskID); se != nil {
		return se
	}
	r.results = append(r.results, newTargetResult(t, statusCompleted, start.TaskID))
	r.flashed = append(r.flashed, *t)
	r.pending = true
	return nil
}

// current runs the checks before an upload: the node's inventory has
// every expected AP and, unless the plan forces the update, whether the
// node already runs the target's version.
func (r *run) current(ctx context.Context, t *Target) (bool, *stepError) {
	checkVersion := !r.plan.Force && t.Version != ""
	if r.plan.ExpectedAPs == nil && !checkVersion {
		return false, nil
	}
	fail := func(err error) *stepError {
		return &stepError{phase: phaseValidation, during: "while reading the firmware inventory for target " + t.label(), target: t, err: err}
	}
	inv, err := r.inventory(ctx)
	if err != nil {
		return false, fail(fmt.Errorf("target %s: %w", t.label(), err))
	}
	if r.plan.ExpectedAPs != nil {
		if err := checkAPs(r.plan.ExpectedAPs, inv); err != nil {
			return false, fail(fmt.Errorf("node %s before target %s: %w", r.plan.Node.ID, t.label(), err))
		}
	}
	return checkVersion && runs(entriesFor(*t, inv), t.Version), nil
}

// label names a target in descriptions and messages.
func (t *Target) label() string {
	switch {
	case t.Component != "":
		return t.Component
	case t.Target != "":
		return t.Target
	default:
		return filepath.Base(t.File)
	}
}
