package actors

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/rmsd/rmsd/messages"
)

func TestCreateJobReturnsUniqueUUIDs(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	a := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n1"}, g)
	b := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n2"}, g)
	if a.ID == b.ID || a.ID == "" {
		t.Fatalf("ids %q %q", a.ID, b.ID)
	}
	for _, id := range []string{a.ID, b.ID} {
		if _, err := uuid.Parse(id); err != nil {
			t.Errorf("job id %q is not a UUID: %v", id, err)
		}
	}
	close(g.release)
	waitTerminal(t, e, a.ID, b.ID)
}

func TestNewJobIsQueued(t *testing.T) {
	e, clk := newEngine(t, Options{})
	g := newGate()
	s := mustCreate(t, e, messages.JobSpec{RackID: "rack-1", NodeID: "node-1"}, g)
	if s.State != messages.StateQueued || s.Description != "Queued" || s.RackID != "rack-1" || s.NodeID != "node-1" {
		t.Fatalf("snapshot %+v", s)
	}
	if !s.CreatedAt.Equal(clk.Now()) || !s.CreatedAt.Equal(s.UpdatedAt) {
		t.Fatalf("timestamps %v %v", s.CreatedAt, s.UpdatedAt)
	}
	g.waitStarted(t, 1)
	close(g.release)
	waitTerminal(t, e, s.ID)
}

func TestProgressMovesJobToRunningWithDescription(t *testing.T) {
	e, clk := newEngine(t, Options{})
	g := newGate()
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	g.waitStarted(t, 1)
	clk.Advance(5e9)
	// The progress report is sent before the workflow signals started; a
	// read through the registry sees it once processed.
	var got messages.JobSnapshot
	for range 1000 {
		if got = mustGet(t, e, s.ID); got.State == messages.StateRunning {
			break
		}
	}
	if got.State != messages.StateRunning || got.Description != "waiting at gate" {
		t.Fatalf("got %+v", got)
	}
	if got.UpdatedAt.Before(got.CreatedAt) {
		t.Fatal("updated_at earlier than created_at")
	}
	close(g.release)
	waitTerminal(t, e, s.ID)
}

func TestCompletedJobIsNotOverwrittenAfterWorkerReturns(t *testing.T) {
	e, _ := newEngine(t, Options{})
	wf := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		_ = job.Complete("Completed", `{"status":"ok"}`)
		if err := job.Fail(messages.NewFailure(messages.ErrorOther, "late")); !errors.Is(err, messages.ErrJobTerminal) {
			panic("second terminal call accepted")
		}
		if job.Progress("late progress") {
			panic("progress accepted after terminal")
		}
	})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	waitTerminal(t, e, s.ID)
	got := mustGet(t, e, s.ID)
	if got.State != messages.StateCompleted || got.ResultJSON != `{"status":"ok"}` || got.Description != "Completed" {
		t.Fatalf("got %+v", got)
	}
}

func TestEarlyReturnMarksJobFailedInternal(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, messages.WorkflowFunc(func(context.Context, messages.Reporter) {}))
	waitTerminal(t, e, s.ID)
	assertAbandoned(t, mustGet(t, e, s.ID))
}

func TestPanicMarksJobFailedInternal(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, messages.WorkflowFunc(func(context.Context, messages.Reporter) {
		panic("boom")
	}))
	waitTerminal(t, e, s.ID)
	assertAbandoned(t, mustGet(t, e, s.ID))
}

func TestPanicAfterExplicitFailurePreservesWorkerFailure(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		_ = job.Fail(messages.NewFailure(messages.ErrorTimeout, "disk full"))
		panic("after failure")
	}))
	waitTerminal(t, e, s.ID)
	got := mustGet(t, e, s.ID)
	if got.State != messages.StateFailed || got.ErrorCode != messages.ErrorTimeout || got.ErrorMessage != "disk full" {
		t.Fatalf("got %+v", got)
	}
}

func TestExplicitFailureSealsJobWithDefaultResultJSON(t *testing.T) {
	e, _ := newEngine(t, Options{})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, fails(messages.ErrorOther, "SSH timeout"))
	waitTerminal(t, e, s.ID)
	got := mustGet(t, e, s.ID)
	if got.State != messages.StateFailed || got.ErrorCode != messages.ErrorOther || got.ErrorMessage != "SSH timeout" {
		t.Fatalf("got %+v", got)
	}
	want := `{"status":"failed","error_code":"Other","error_message":"SSH timeout"}`
	if got.ResultJSON != want {
		t.Fatalf("result_json %s, want %s", got.ResultJSON, want)
	}
}

func TestGetUnknownJobReturnsNotFound(t *testing.T) {
	e, _ := newEngine(t, Options{})
	if _, err := e.Get(testCtx(t), "nope", false); !errors.Is(err, messages.ErrJobNotFound) {
		t.Fatalf("err %v", err)
	}
}

func TestCreateIsIdempotentPerID(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	id := uuid.NewString()
	a := mustCreate(t, e, messages.JobSpec{ID: id, RackID: "r", NodeID: "n"}, g)
	b := mustCreate(t, e, messages.JobSpec{ID: id, RackID: "r", NodeID: "n"}, g)
	if a.ID != id || b.ID != id {
		t.Fatalf("ids %s %s", a.ID, b.ID)
	}
	g.waitStarted(t, 1)
	close(g.release)
	waitTerminal(t, e, id)
	select {
	case extra := <-g.started:
		t.Fatalf("workflow started twice (%s)", extra)
	default:
	}
}

func assertAbandoned(t *testing.T, s messages.JobSnapshot) {
	t.Helper()
	if s.State != messages.StateFailed || s.ErrorCode != messages.ErrorInternal || s.ErrorMessage != "job task exited before recording a terminal state" {
		t.Fatalf("want abandoned failure, got %+v", s)
	}
	if !strings.Contains(s.ResultJSON, `"error_code":"Internal"`) {
		t.Fatalf("result_json %s", s.ResultJSON)
	}
}
