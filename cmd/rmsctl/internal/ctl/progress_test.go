package ctl

import (
	"testing"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw/fwupdate"
)

func job(state rmspb.JobExecutionState, desc string) *rmspb.JobStatus {
	return &rmspb.JobStatus{ExecutionState: state, StateDescription: desc}
}

const (
	queued    = rmspb.JobExecutionState_JOB_EXECUTION_STATE_QUEUED
	running   = rmspb.JobExecutionState_JOB_EXECUTION_STATE_RUNNING
	completed = rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED
	failedJob = rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED
)

// The descriptions are the ones rmsd's workflows report (hw/fwupdate,
// hw/switchimage): a child's bar moves through them in order.
func TestLeafFractionFollowsTheStages(t *testing.T) {
	for _, tc := range []struct {
		job  *rmspb.JobStatus
		want float64
	}{
		{job(queued, "Queued"), 0},
		{job(running, "Running"), 0.05},
		{job(running, "Uploading fw.fwpkg for target HMC"), 0.2},
		{job(running, "Polling firmware task 3 for target HMC"), 0.5},
		{job(running, "Activating firmware on rack-001-compute-01"), 0.8},
		{job(running, "Switch system image update stage 1/6: reading the NVOS partitions"), 0},
		{job(running, "Switch system image update stage 4/6: triggering the install"), 0.5},
		{job(running, "Switch system image update stage 9/6: nonsense"), 0.05},
		{job(completed, "Firmware update completed"), 1},
		{job(failedJob, "Firmware update failed"), 1},
	} {
		if got := leafFraction(tc.job); got != tc.want {
			t.Errorf("%s %q: %v, want %v", tc.job.GetExecutionState(), tc.job.GetStateDescription(), got, tc.want)
		}
	}
}

func TestParentFractionCountsFinishedChildren(t *testing.T) {
	parent := job(running, "Batch firmware update in progress")
	children := []*rmspb.JobStatus{job(completed, ""), job(failedJob, ""), job(running, "Uploading x"), job(queued, "")}
	if got := parentFraction(parent, children); got != 0.5 {
		t.Errorf("2 of 4 children finished: %v, want 0.5", got)
	}
	if got := parentFraction(job(failedJob, ""), children); got != 1 {
		t.Errorf("an ended parent: %v, want 1", got)
	}
	if got := parentFraction(job(running, "Rack reboot step 3: shelves off"), nil); got != 0.05 {
		t.Errorf("a parent without children follows its own stage: %v", got)
	}
}

// TestFirmwarePhasesAreTheWorkflowsPrefixes: the stages rmsctl recognises
// are the ones hw/fwupdate reports, in its order.
func TestFirmwarePhasesAreTheWorkflowsPrefixes(t *testing.T) {
	want := []string{fwupdate.ProgressUploading, fwupdate.ProgressPolling, fwupdate.ProgressActivating}
	if len(firmwarePhases) != len(want) {
		t.Fatalf("%d phases, want %d", len(firmwarePhases), len(want))
	}
	for i, p := range firmwarePhases {
		if p.prefix != want[i] {
			t.Errorf("phase %d is %q, hw/fwupdate reports %q", i, p.prefix, want[i])
		}
	}
}
