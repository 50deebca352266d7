package ctl

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// A runbook job (a cold reboot, a scale-up fabric reconcile) reports the
// stage it is in as its own description, while its children only hold the
// nodes it drives. How far such a job is, is its stage, not how many of
// those holds have ended.

// runbookStage is the stage a job's description names: the n-th of total,
// and what the job does in it.
type runbookStage struct {
	n, total int
	what     string
}

// String is the stage as rmsctl shows it: "stage 4/9: waiting for ...".
func (s runbookStage) String() string {
	return fmt.Sprintf("stage %d/%d: %s", s.n, s.total, s.what)
}

// fraction is how far the job is at the start of the stage.
func (s runbookStage) fraction() float64 {
	return float64(s.n-1) / float64(s.total)
}

// numberedStage matches a description that counts its own stages:
// "Switch system image update stage 3/6: ...", "Scale-up fabric reconcile
// step 3/13: reading the state of every switch".
var numberedStage = regexp.MustCompile(`(?i)\b(?:stage|step) (\d+)\s*/\s*(\d+)\b:?\s*(.*)$`)

// coldRebootPrefix starts a cold reboot's description while it runs:
// "Rack reboot step 2-3: waiting for trays to discharge".
const coldRebootPrefix = "Rack reboot step "

// coldRebootStages are the descriptions of the cold-reboot runbook's
// stages in order (hw/coldreboot.StageDescriptions, which a test holds
// them to; rmsctl does not link the workflow code). The runbook numbers
// its steps after the rack procedure, where some stages share a step and
// some steps are done elsewhere, so the stage number is the position here.
var coldRebootStages = []string{
	"Rack reboot step 0: shutting down compute trays gracefully",
	"Rack reboot step 0: waiting for compute trays to power off",
	"Rack reboot step 1: powering off power shelves",
	"Rack reboot step 2-3: waiting for trays to discharge",
	"Rack reboot step 4: powering on power shelves",
	"Rack reboot step 5-6: waiting for power shelves and BMCs to come back",
	"Rack reboot step 7-8: waiting for NVOS on every switch",
	"Rack reboot step 10: powering on compute trays",
	"Rack reboot step 11-12: waiting for compute trays to boot",
}

// stageOfJob is the stage j's description names, if it names one.
func stageOfJob(j *rmspb.JobStatus) (runbookStage, bool) {
	desc := j.GetStateDescription()
	if strings.HasPrefix(desc, coldRebootPrefix) {
		return coldRebootStage(desc)
	}
	m := numberedStage.FindStringSubmatch(desc)
	if m == nil {
		return runbookStage{}, false
	}
	n, err1 := strconv.Atoi(m[1])
	total, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil || total <= 0 || n < 1 || n > total {
		return runbookStage{}, false
	}
	what := strings.TrimSpace(m[3])
	if what == "" {
		what = desc
	}
	return runbookStage{n: n, total: total, what: what}, true
}

// coldRebootStage places a cold reboot's description in the runbook: by
// its whole text, else (an rmsd whose wording differs) by its step alone.
func coldRebootStage(desc string) (runbookStage, bool) {
	step, what, _ := strings.Cut(strings.TrimPrefix(desc, coldRebootPrefix), ": ")
	i := slices.Index(coldRebootStages, desc)
	if i < 0 {
		i = slices.IndexFunc(coldRebootStages, func(s string) bool {
			return strings.HasPrefix(s, coldRebootPrefix+step+": ")
		})
	}
	if i < 0 {
		return runbookStage{}, false
	}
	if what == "" {
		what = strings.SplitN(coldRebootStages[i], ": ", 2)[1]
	}
	return runbookStage{n: i + 1, total: len(coldRebootStages), what: what + " (runbook step " + step + ")"}, true
}

// runbookSentinels are the suffixes of the rack-wide node ids a runbook
// job runs on ("rack-001:cold-reboot"; hw/coldreboot.SentinelNode and
// hw/fabricsync.SentinelNode, which a test holds them to).
var runbookSentinels = []string{":cold-reboot", ":scale-up-fabric"}

// isRunbook says whether j is a runbook job: it names its stage, or it
// runs on a rack's runbook sentinel. Its children only hold the nodes it
// drives, from the first poll on (before the first stage is reported).
func isRunbook(j *rmspb.JobStatus) bool {
	if _, ok := stageOfJob(j); ok {
		return true
	}
	for _, s := range runbookSentinels {
		if j.GetRackId() != "" && j.GetNodeId() == j.GetRackId()+s {
			return true
		}
	}
	return false
}
