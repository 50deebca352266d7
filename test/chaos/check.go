package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// check waits up to settle for every admitted job (and its children) to
// be terminal, then counts what is lost, stuck and held, the simulator's
// overlaps, and whether the daemon still answers.
func check(ctx context.Context, d *daemon, ids []string, settle time.Duration, verbose bool, rep *report) error {
	deadline := time.Now().Add(settle)
	var pending []string
	for {
		var still []string
		rep.jobs, rep.lost = 0, 0
		for _, id := range ids {
			states, err := jobStates(ctx, d, id)
			switch {
			case status.Code(err) == codes.NotFound:
				rep.lost++
				continue
			case err != nil:
				rep.daemonErr = fmt.Errorf("GetJobStatus: %w", err)
				return nil
			}
			rep.jobs += len(states)
			for _, s := range states {
				if !terminal(s) {
					still = append(still, id)
					break
				}
			}
		}
		pending = still
		if len(pending) == 0 || time.Now().After(deadline) {
			break
		}
		pause(ctx, settleStep)
	}
	rep.stuck = len(pending)
	if verbose {
		for _, id := range pending {
			describeStuck(ctx, d, id)
		}
	}
	// A killed job reads terminal at once but holds its nodes until its
	// cancelled workflow has returned: held nodes get the rest of settle.
	for {
		l, err := d.admin.ListActors(ctx, &adminpb.ListActorsRequest{})
		if err != nil {
			rep.daemonErr = fmt.Errorf("admin ListActors: %w", err)
			return nil
		}
		rep.held = int(l.GetHeldNodes())
		if rep.held == 0 || time.Now().After(deadline) {
			break
		}
		pause(ctx, settleStep)
	}
	var err error
	if rep.overlaps, err = overlaps(ctx, d); err != nil {
		rep.daemonErr = err
		return nil
	}
	if rep.overlaps > 0 {
		fmt.Fprintf(os.Stderr, "chaos: %d overlaps; the daemon's log %s names each (\"two holders acted on one device\")\n", rep.overlaps, d.logPath)
	}
	if _, err := d.rms.GetVersion(ctx, &rmspb.GetVersionRequest{}); err != nil {
		rep.daemonErr = fmt.Errorf("GetVersion: %w", err)
	}
	return nil
}

func jobStates(ctx context.Context, d *daemon, id string) ([]*rmspb.JobStatus, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := d.rms.GetJobStatus(rctx, &rmspb.GetJobStatusRequest{JobId: id, IncludeChildJobStates: true})
	if err != nil {
		return nil, err
	}
	return resp.GetJobStates(), nil
}

func terminal(s *rmspb.JobStatus) bool {
	switch s.GetExecutionState() {
	case rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED, rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED:
		return true
	}
	return false
}

// describeStuck prints a stuck job's tree: every job that is not terminal,
// with its node and description.
func describeStuck(ctx context.Context, d *daemon, id string) {
	states, err := jobStates(ctx, d, id)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: stuck %s: %v\n", id, err)
		return
	}
	for _, s := range states {
		fmt.Fprintf(os.Stderr, "chaos: stuck %s: job %s parent %q node %s/%s %s %q\n", id, s.GetJobId(), s.GetParentJobId(),
			s.GetRackId(), s.GetNodeId(), s.GetExecutionState(), s.GetStateDescription())
	}
}
