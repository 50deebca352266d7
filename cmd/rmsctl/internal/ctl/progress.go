package ctl

import (
	"strings"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// JobStatus has no percentage: how far a job is comes from its state, its
// children and the stage its description names. The estimates below only
// ever feed a progress bar, which never moves backwards (see bar).

// firmwarePhases are the descriptions a firmware child moves through
// (hw/fwupdate's Progress* prefixes, which a test holds these to; rmsctl
// does not link the workflow code), in order, with how far each one is.
var firmwarePhases = []struct {
	prefix   string
	fraction float64
}{
	{"Uploading ", 0.2},
	{"Polling firmware task ", 0.5},
	{"Activating firmware on ", 0.8},
}

// terminal says whether a job has ended.
func terminal(s rmspb.JobExecutionState) bool {
	return s == rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED || s == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED
}

// leafFraction estimates how far a job without children is, 0 to 1.
func leafFraction(j *rmspb.JobStatus) float64 {
	switch j.GetExecutionState() {
	case rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED, rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED:
		return 1
	case rmspb.JobExecutionState_JOB_EXECUTION_STATE_RUNNING:
	default:
		return 0
	}
	if st, ok := stageOfJob(j); ok {
		return st.fraction()
	}
	desc := j.GetStateDescription()
	for _, p := range firmwarePhases {
		if strings.HasPrefix(desc, p.prefix) {
			return p.fraction
		}
	}
	return 0.05 // running, stage unknown
}

// finishedChildren counts the children (states[1:]) that have ended.
func finishedChildren(children []*rmspb.JobStatus) int {
	n := 0
	for _, c := range children {
		if terminal(c.GetExecutionState()) {
			n++
		}
	}
	return n
}

// parentFraction is the parent's own estimate when it has no children or
// names its stage (a runbook job, whose children only hold nodes), else
// the share of finished children.
func parentFraction(parent *rmspb.JobStatus, children []*rmspb.JobStatus) float64 {
	if terminal(parent.GetExecutionState()) {
		return 1
	}
	if isRunbook(parent) || len(children) == 0 {
		return leafFraction(parent)
	}
	return float64(finishedChildren(children)) / float64(len(children))
}
