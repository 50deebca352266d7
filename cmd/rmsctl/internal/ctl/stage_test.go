package ctl

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw/coldreboot"
	"github.com/rmsd/rmsd/hw/fabricsync"
)

// TestColdRebootStagesAreTheRunbooks: the stages rmsctl numbers are the
// descriptions hw/coldreboot reports, in its order.
func TestColdRebootStagesAreTheRunbooks(t *testing.T) {
	if want := coldreboot.StageDescriptions(); !slices.Equal(coldRebootStages, want) {
		t.Errorf("rmsctl's cold-reboot stages\n%q\nare not the runbook's\n%q", coldRebootStages, want)
	}
}

func TestRunbookSentinelsAreTheWorkflows(t *testing.T) {
	for _, node := range []string{coldreboot.SentinelNode("r1"), fabricsync.SentinelNode("r1")} {
		if !isRunbook(&rmspb.JobStatus{RackId: new("r1"), NodeId: new(node)}) {
			t.Errorf("a job on %s is not recognised as a runbook", node)
		}
	}
	if isRunbook(&rmspb.JobStatus{RackId: new("r1"), NodeId: new("r1-compute-01"), StateDescription: "Batch firmware update"}) {
		t.Error("a firmware job taken for a runbook")
	}
}

func TestStageOfJob(t *testing.T) {
	for _, tc := range []struct {
		desc string
		want string // "" when no stage
		frac float64
	}{
		{"Rack reboot step 0: shutting down compute trays gracefully", "stage 1/9: shutting down compute trays gracefully (runbook step 0)", 0},
		{"Rack reboot step 0: waiting for compute trays to power off", "stage 2/9: waiting for compute trays to power off (runbook step 0)", 1.0 / 9},
		{"Rack reboot step 11-12: waiting for compute trays to boot", "stage 9/9: waiting for compute trays to boot (runbook step 11-12)", 8.0 / 9},
		// An rmsd that words a stage differently: placed by its step.
		{"Rack reboot step 2-3: letting the trays discharge", "stage 4/9: letting the trays discharge (runbook step 2-3)", 3.0 / 9},
		{"Rack reboot step 3: shelves off", "", 0},
		{"Scale-up fabric reconcile step 3/13: reading the state of every switch: rack-001-switch-02",
			"stage 3/13: reading the state of every switch: rack-001-switch-02", 2.0 / 13},
		{"Switch system image update stage 4/6: triggering the install", "stage 4/6: triggering the install", 0.5},
		{"Switch system image update stage 7/6: nonsense", "", 0},
		{"Scale-up fabric reconcile: restoring the snapshot (2 change(s))", "", 0},
		{"Cold reboot completed", "", 0},
	} {
		st, ok := stageOfJob(job(running, tc.desc))
		switch {
		case tc.want == "" && ok:
			t.Errorf("%q: stage %q, want none", tc.desc, st)
		case tc.want != "" && (!ok || st.String() != tc.want || st.fraction() != tc.frac):
			t.Errorf("%q: %q (%v, found %v), want %q (%v)", tc.desc, st, st.fraction(), ok, tc.want, tc.frac)
		}
	}
}

// TestRunbookParentShowsItsStage: a cold reboot's parent shows its stage
// and how far the runbook is, whatever its node holds do; another batch
// still counts its children.
func TestRunbookParentShowsItsStage(t *testing.T) {
	parent := job(running, "Rack reboot step 5-6: waiting for power shelves and BMCs to come back")
	holds := []*rmspb.JobStatus{job(running, "Reserved by cold reboot job x"), job(running, "Reserved by cold reboot job x")}
	if got := parentText(parent, holds, isRunbook(parent)); got != "Running: stage 6/9: waiting for power shelves and BMCs to come back (runbook step 5-6)" {
		t.Errorf("cold reboot parent text %q", got)
	}
	if got := parentFraction(parent, holds); got != 5.0/9 {
		t.Errorf("cold reboot parent at stage 6/9: %v, want 5/9", got)
	}
	batch := job(running, "Batch firmware update in progress")
	kids := []*rmspb.JobStatus{job(completed, ""), job(running, "Uploading x")}
	if got := parentText(batch, kids, isRunbook(batch)); got != "Running, 1/2 children finished: Batch firmware update in progress" {
		t.Errorf("batch parent text %q", got)
	}
	if got := parentText(job(completed, "Cold reboot completed"), holds, true); got != "Completed: Cold reboot completed" {
		t.Errorf("ended runbook text %q", got)
	}
}

// TestLinesViewPrintsTheStageNotTheHolds: the plain view of a runbook has
// the parent's stage on each change and no line per node hold, except a
// hold that failed.
func TestLinesViewPrintsTheStageNotTheHolds(t *testing.T) {
	var out strings.Builder
	v := &linesView{out: &out, seen: map[string]string{}}
	parent := &rmspb.JobStatus{JobId: "p", RackId: new("r1"), NodeId: new("r1:cold-reboot"), ExecutionState: queued, StateDescription: "Queued"}
	hold := func(id string, s rmspb.JobExecutionState) *rmspb.JobStatus {
		return &rmspb.JobStatus{JobId: id, ExecutionState: s, StateDescription: "Reserved by cold reboot job p", ErrorMessage: map[bool]string{true: "node lost"}[s == failedJob]}
	}
	steps := [][]*rmspb.JobStatus{
		{parent, hold("a", running), hold("b", running)},
		{withDesc(parent, running, "Rack reboot step 1: powering off power shelves"), hold("a", running), hold("b", running)},
		{withDesc(parent, running, "Rack reboot step 1: powering off power shelves"), hold("a", running), hold("b", failedJob)},
	}
	for _, s := range steps {
		if err := v.update(s); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "job p r1/r1:cold-reboot Running: stage 3/9: powering off power shelves (runbook step 1)") ||
		!strings.Contains(lines[2], "child b") || !strings.Contains(lines[2], "node lost") {
		t.Errorf("lines view:\n%s", out.String())
	}
}

func withDesc(j *rmspb.JobStatus, s rmspb.JobExecutionState, desc string) *rmspb.JobStatus {
	c := proto.Clone(j).(*rmspb.JobStatus)
	c.ExecutionState, c.StateDescription = s, desc
	return c
}

func TestFitWidth(t *testing.T) {
	long := "waiting for power shelves and BMCs to come back (runbook step 5-6)"
	if got := fitWidth(long, 200); got != long {
		t.Errorf("cut on a wide line: %q", got)
	}
	if got := fitWidth(long, 20); got != "waiting for power s…" {
		t.Errorf("fitWidth(20) = %q", got)
	}
	if got := fitWidth(long, 0); got != "" {
		t.Errorf("fitWidth(0) = %q", got)
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{"s3cret\n": "s3cret", "s3cret\r\nrest\n": "s3cret", "no newline": "no newline", "  spaced  \n": "  spaced  "} {
		if got, err := firstLine(strings.NewReader(in), "test"); err != nil || got != want {
			t.Errorf("firstLine(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "\n", strings.Repeat("x", maxSecretBytes+1)} {
		if _, err := firstLine(strings.NewReader(in), "test"); exitCode(err) != ExitUsage {
			t.Errorf("firstLine of %d bytes: %v, want a usage error", len(in), err)
		}
	}
	_, err := secretSource{}.read(context.Background(), Streams{In: strings.NewReader("pw\n")}, "password")
	if exitCode(err) != ExitUsage || !strings.Contains(err.Error(), "--password-file FILE or --password-stdin") {
		t.Errorf("no source and no terminal: %v", err)
	}
}
