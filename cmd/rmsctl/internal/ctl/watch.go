package ctl

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// jobView shows a watched job: update receives every poll's states (the
// job first, then its children), finish the last one.
type jobView interface {
	update(states []*rmspb.JobStatus) error
	// finish ends the view; final is nil when the watch stopped early.
	finish(final []*rmspb.JobStatus)
}

// watch polls GetJobStatus with include_child_job_states every interval
// until the job ends: nil when it completed, a failed error when it
// failed, rmsctl's RPC errors otherwise (NOT_FOUND for an unknown job,
// unreachable for a transport error).
func (a *app) watch(ctx context.Context, id string, interval time.Duration) error {
	if interval <= 0 {
		return usageError("--interval must be positive, got %s", interval)
	}
	view := a.newJobView(ctx)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		resp, err := call(ctx, a, "GetJobStatus", &rmspb.GetJobStatusRequest{JobId: id, IncludeChildJobStates: true}, rmspb.RackManagerClient.GetJobStatus)
		if err != nil {
			view.finish(nil)
			if ctx.Err() != nil {
				return &exitError{code: ExitInterrupted, err: fmt.Errorf("watch of job %s interrupted", id)}
			}
			return err
		}
		states := resp.GetJobStates()
		if len(states) == 0 {
			view.finish(nil)
			return failed("GetJobStatus %s: empty reply", id)
		}
		if err := view.update(states); err != nil {
			view.finish(nil)
			return err
		}
		if job := states[0]; terminal(job.GetExecutionState()) {
			view.finish(states)
			if job.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
				return failed("job %s failed: %s", id, failureText(job))
			}
			return nil
		}
		select {
		case <-ctx.Done():
			view.finish(nil)
			return &exitError{code: ExitInterrupted, err: fmt.Errorf("watch of job %s interrupted", id)}
		case <-tick.C:
		}
	}
}

// newJobView picks the view: JSON lines with -o json, progress bars on a
// terminal, plain lines otherwise.
func (a *app) newJobView(ctx context.Context) jobView {
	if a.output == "json" {
		return &jsonView{out: safeWriter{a.streams.Out}, seen: map[string]string{}}
	}
	if f, ok := a.stdoutIsTerminal(); ok {
		return newBarsView(ctx, f)
	}
	return &linesView{out: safeWriter{a.streams.Out}, seen: map[string]string{}}
}

// failureText is a failed job's error code, message and description.
func failureText(j *rmspb.JobStatus) string {
	msg := j.GetErrorMessage()
	if msg == "" {
		msg = j.GetStateDescription()
	}
	if c := j.GetErrorCode(); c != rmspb.JobError_JOB_ERROR_UNSPECIFIED {
		return c.String() + ": " + msg
	}
	return msg
}

// changeKey is what a state change is: the state and the description.
func changeKey(j *rmspb.JobStatus) string {
	return j.GetExecutionState().String() + "\x00" + j.GetStateDescription() + "\x00" + j.GetErrorMessage()
}

// label names a job for humans: its node when it has one.
func label(j *rmspb.JobStatus) string {
	switch {
	case j.GetNodeId() != "":
		return j.GetRackId() + "/" + j.GetNodeId()
	case j.GetRackId() != "":
		return j.GetRackId()
	}
	return "job"
}

// linesView prints one line per change of any job's state or description.
// A runbook job's line names its stage; its children, which only hold the
// nodes it drives, get lines of their own only when one fails.
type linesView struct {
	out     io.Writer
	seen    map[string]string
	runbook bool
}

func (v *linesView) update(states []*rmspb.JobStatus) error {
	job, children := states[0], states[1:]
	v.runbook = v.runbook || isRunbook(job)
	for i, j := range states {
		key := changeKey(j)
		if v.seen[j.GetJobId()] == key {
			continue
		}
		if i > 0 && v.runbook && j.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
			continue
		}
		v.seen[j.GetJobId()] = key
		role, text := "child ", jobState(j.GetExecutionState())+": "+j.GetStateDescription()
		if i == 0 {
			role, text = "job ", parentText(job, children, v.runbook)
		}
		line := fmt.Sprintf("%s %s%s %s %s", time.Now().UTC().Format("15:04:05"), role, j.GetJobId(), label(j), text)
		if j.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
			line += " (" + failureText(j) + ")"
		}
		if _, err := fmt.Fprintln(v.out, line); err != nil {
			return err
		}
	}
	return nil
}

func (v *linesView) finish([]*rmspb.JobStatus) {}

// jsonView prints the whole reply as one JSON line whenever any job in it
// changed.
type jsonView struct {
	out  io.Writer
	seen map[string]string
}

func (v *jsonView) update(states []*rmspb.JobStatus) error {
	changed := false
	for _, j := range states {
		if key := changeKey(j); v.seen[j.GetJobId()] != key {
			v.seen[j.GetJobId()] = key
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return writeJSONLine(v.out, &rmspb.GetJobStatusResponse{JobStates: states})
}

func (v *jsonView) finish([]*rmspb.JobStatus) {}
