package fwupdate

import (
	"github.com/rmsd/rmsd/hw/pause"

	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
)

// Why a task was given up on.
var (
	errTaskFailed  = errors.New("firmware task failed")
	errTaskTimeout = errors.New("firmware task timed out")
	errTaskLost    = errors.New("firmware task could not be read")
)

// poll reads a target's firmware task every PollInterval, one node
// operation per read, until the task ends. The task is bounded by
// TaskTimeout; failing reads are retried for TaskReadGrace (a BMC busy
// installing may not answer), except a refused login, which no retry
// mends.
func (r *run) poll(ctx context.Context, t *Target, id string) *stepError {
	r.job.Progress(fmt.Sprintf(ProgressPolling+"%s for target %s", id, t.label()))
	fail := func(err error) *stepError {
		return &stepError{phase: phasePoll, during: fmt.Sprintf("while polling firmware task %s for target %s", id, t.label()),
			target: t, err: err}
	}
	tctx, cancel := context.WithTimeoutCause(ctx, r.t.TaskTimeout, errTaskTimeout)
	defer cancel()
	var last platform.TaskStatus
	var failingSince time.Time
	for {
		st, err := r.task(tctx, id)
		switch {
		case tctx.Err() != nil:
			return fail(r.taskEnded(ctx, t, id, last))
		case err != nil:
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if errors.Is(err, redfish.ErrUnauthenticated) || time.Since(failingSince) >= r.t.TaskReadGrace {
				return fail(fmt.Errorf("%w: task %s for target %s: %w", errTaskLost, id, t.label(), err))
			}
		case st.Failed:
			return fail(fmt.Errorf("%w: task %s for target %s ended %s: %s", errTaskFailed, id, t.label(), st.State, st.Message))
		case st.Done:
			return nil
		default:
			last, failingSince = st, time.Time{}
		}
		if pause.For(tctx, r.t.PollInterval) != nil {
			return fail(r.taskEnded(ctx, t, id, last))
		}
	}
}

// taskEnded explains a poll whose context ended: the job's context, or the
// task's own bound.
func (r *run) taskEnded(ctx context.Context, t *Target, id string, last platform.TaskStatus) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	seen := "never read"
	if last.State != "" {
		seen = fmt.Sprintf("last seen %s at %d%%", last.State, last.Percent)
	}
	return fmt.Errorf("%w: task %s for target %s did not finish within %s (%s)", errTaskTimeout, id, t.label(), r.t.TaskTimeout, seen)
}

// task reads a firmware task in one node operation.
func (r *run) task(ctx context.Context, id string) (platform.TaskStatus, error) {
	var st platform.TaskStatus
	err := r.deps.Nodes.One(ctx, r.plan.Node, func(ctx context.Context, _ int, d platform.Device) (err error) {
		st, err = d.FirmwareTask(ctx, id)
		return err
	})
	return st, err
}
