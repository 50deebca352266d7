package actors

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

func cleanupEngine(t *testing.T) (*Engine, chan messages.CleanupReport) {
	t.Helper()
	reports := make(chan messages.CleanupReport, 16)
	e, _ := newEngine(t, Options{OnCleanup: func(r messages.CleanupReport) { reports <- r }})
	return e, reports
}

func nextReport(t *testing.T, reports chan messages.CleanupReport) messages.CleanupReport {
	t.Helper()
	select {
	case r := <-reports:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no cleanup report")
		return messages.CleanupReport{}
	}
}

func TestPanicMarksJobFailedAndRunsCleanup(t *testing.T) {
	e, reports := cleanupEngine(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	if err := os.MkdirAll(filepath.Join(cache, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"},
		messages.WorkflowFunc(func(context.Context, messages.Reporter) { panic("boom") }), &messages.CleanupPlan{Dir: cache})
	if err != nil {
		t.Fatal(err)
	}
	r := nextReport(t, reports)
	if r.Result != messages.CleanupRemoved || r.JobID != s.ID || r.Path != cache {
		t.Fatalf("report %+v", r)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Fatalf("dir still there: %v", err)
	}
	waitTerminal(t, e, s.ID)
	assertAbandoned(t, mustGet(t, e, s.ID))
}

func TestCleanupWaitsForChildPanicToBecomeTerminal(t *testing.T) {
	e, reports := cleanupEngine(t)
	cache := t.TempDir()
	release := make(chan struct{})
	child := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "c"}, messages.WorkflowFunc(func(context.Context, messages.Reporter) {
		<-release
		panic("child boom")
	}))
	book, err := e.Create(testCtx(t), messages.JobSpec{Description: "object cache cleanup"},
		completes("Completed", ""), &messages.CleanupPlan{Dir: cache, AfterJobs: []string{child.ID}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, e, book.ID)
	select {
	case r := <-reports:
		t.Fatalf("cleanup ran before the child ended: %+v", r)
	default:
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("dir removed early: %v", err)
	}
	close(release)
	if r := nextReport(t, reports); r.Result != messages.CleanupRemoved {
		t.Fatalf("report %+v", r)
	}
	assertAbandoned(t, mustGet(t, e, child.ID))
}

func TestCleanupTimesOutWaitingForJobs(t *testing.T) {
	e, reports := cleanupEngine(t)
	cache := t.TempDir()
	g := newGate()
	child := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "c"}, g)
	mustCreatePlan(t, e, messages.JobSpec{NodeID: "bookkeeping"}, completes("Completed", ""),
		&messages.CleanupPlan{Dir: cache, AfterJobs: []string{child.ID}, Timeout: 20 * time.Millisecond})
	if r := nextReport(t, reports); r.Result != messages.CleanupSkipped {
		t.Fatalf("report %+v", r)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("dir removed after a timeout: %v", err)
	}
	close(g.release)
	waitTerminal(t, e, child.ID)
}

func TestCleanupPanicReturnsPanickedReportAndKeepsJobState(t *testing.T) {
	e, reports := cleanupEngine(t)
	e.core.removeDir = func(string) error { panic("remove exploded") } // before any job exists
	cache := t.TempDir()
	s, err := e.Create(testCtx(t), messages.JobSpec{NodeID: "x"}, completes("Completed", `{"status":"ok"}`), &messages.CleanupPlan{Dir: cache})
	if err != nil {
		t.Fatal(err)
	}
	r := nextReport(t, reports)
	if r.Result != messages.CleanupPanicked || r.Err != "remove exploded" {
		t.Fatalf("report %+v", r)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatal("dir should be left behind")
	}
	waitTerminal(t, e, s.ID)
	if got := mustGet(t, e, s.ID); got.State != messages.StateCompleted {
		t.Fatalf("job %+v", got)
	}
}

func TestCleanupFailureReportsPathAndError(t *testing.T) {
	e, reports := cleanupEngine(t)
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustCreatePlan(t, e, messages.JobSpec{NodeID: "x"}, completes("Completed", ""), &messages.CleanupPlan{Dir: file})
	r := nextReport(t, reports)
	if r.Result != messages.CleanupFailed || r.Path != file || r.Err == "" {
		t.Fatalf("report %+v", r)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal("file was removed")
	}
}

func TestCleanupOfMissingDirReportsNotFound(t *testing.T) {
	e, reports := cleanupEngine(t)
	mustCreatePlan(t, e, messages.JobSpec{NodeID: "x"}, completes("Completed", ""), &messages.CleanupPlan{Dir: filepath.Join(t.TempDir(), "never")})
	if r := nextReport(t, reports); r.Result != messages.CleanupNotFound {
		t.Fatalf("report %+v", r)
	}
}

func mustCreatePlan(t *testing.T, e *Engine, spec messages.JobSpec, wf messages.Workflow, plan *messages.CleanupPlan) messages.JobSnapshot {
	t.Helper()
	s, err := e.Create(testCtx(t), spec, wf, plan)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBatchCleanupRunsWhenTheParentIsSealed(t *testing.T) {
	e, reports := cleanupEngine(t)
	cache := filepath.Join(t.TempDir(), "DGXGB200_1.3.7-ephemeral")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	slow := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		<-release
		_ = job.Complete("Completed", `{"status":"completed"}`)
	})
	rep, err := e.CreateBatch(testCtx(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate}, []messages.BatchTarget{
		{RackID: "r", NodeID: "a", Workflow: completes("Completed", `{"status":"completed"}`)},
		{RackID: "r", NodeID: "b", Workflow: slow},
	}, &messages.CleanupPlan{Dir: cache})
	if err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, e, rep.Admitted[0].ID)
	select {
	case r := <-reports:
		t.Fatalf("cleanup ran while a child was still running: %+v", r)
	default:
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("cache removed early: %v", err)
	}
	close(release)
	r := nextReport(t, reports)
	if r.Result != messages.CleanupRemoved || r.JobID != rep.Parent.ID || r.Path != cache {
		t.Fatalf("report %+v, want the parent's removal of %s", r, cache)
	}
	if got := mustGet(t, e, rep.Parent.ID); !got.State.IsTerminal() {
		t.Fatalf("cleanup ran before the parent was sealed: %+v", got)
	}
	if _, err := os.Stat(cache); !os.IsNotExist(err) {
		t.Fatalf("cache still there: %v", err)
	}
}

func TestBatchCleanupOfARefusedBatchRunsWhenSealed(t *testing.T) {
	e, reports := cleanupEngine(t)
	cache := t.TempDir()
	holder := newGate()
	mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "a"}, holder)
	rep, err := e.CreateBatch(testCtx(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate}, []messages.BatchTarget{
		{RackID: "r", NodeID: "a", Workflow: completes("Completed", "")},
	}, &messages.CleanupPlan{Dir: cache})
	if err != nil || len(rep.Admitted) != 0 || len(rep.Rejected) != 1 {
		t.Fatalf("batch on a held node: %+v %v", rep, err)
	}
	if _, err := e.Seal(testCtx(t), rep.Parent.ID, messages.Failed(messages.NewFailure(messages.ErrorUpdateInProgress, "every node busy"))); err != nil {
		t.Fatal(err)
	}
	if r := nextReport(t, reports); r.Result != messages.CleanupRemoved || r.JobID != rep.Parent.ID {
		t.Fatalf("report %+v", r)
	}
}
