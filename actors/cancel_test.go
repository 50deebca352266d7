package actors

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/messages"
)

// causeReporter waits for cancellation and fails its job with the
// context's cause, as the hardware workflows word it.
func causeReporter(started chan<- string) messages.Workflow {
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("waiting for cancellation")
		started <- job.ID()
		<-ctx.Done()
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, context.Cause(ctx).Error()))
	})
}

func TestCancellingABatchParentCancelsEveryChild(t *testing.T) {
	e, _ := newEngine(t, Options{})
	started := make(chan string, 3)
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(causeReporter(started),
		"rack-01", "node-01", "rack-01", "node-02", "rack-01", "node-03"))
	for range 3 {
		<-started
	}
	got, err := e.CancelWith(testCtx(t), rep.Parent.ID, messages.ErrCancelledByOperator)
	if err != nil || got.Jobs != 3 || !got.Signalled || got.Terminal {
		t.Fatalf("cancel of the parent = %+v, %v; want 3 children signalled", got, err)
	}
	waitTerminal(t, e, rep.Parent.ID)
	jobs, err := e.Get(testCtx(t), rep.Parent.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.State != messages.StateFailed {
			t.Fatalf("job %s after the parent's cancel: %+v", j.ID, j)
		}
	}
	for _, c := range jobs[1:] {
		if c.ErrorMessage != messages.ErrCancelledByOperator.Error() {
			t.Fatalf("child %s message %q, want the operator's cause", c.ID, c.ErrorMessage)
		}
	}
	if l, err := e.Actors(testCtx(t)); err != nil || l.HeldNodes != 0 {
		t.Fatalf("%d holds left after every child ended (%v)", l.HeldNodes, err)
	}
	again, err := e.CancelWith(testCtx(t), rep.Parent.ID, nil)
	if err != nil || !again.Terminal || again.Jobs != 0 {
		t.Fatalf("cancel of the ended parent = %+v, %v; want Terminal", again, err)
	}
	if _, err := e.CancelWith(testCtx(t), "no-such-job", nil); !errors.Is(err, messages.ErrJobNotFound) {
		t.Fatalf("cancel of an unknown job: %v", err)
	}
}

func TestCancellingALeafSignalsOnlyIt(t *testing.T) {
	e, _ := newEngine(t, Options{})
	started := make(chan string, 2)
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(causeReporter(started),
		"rack-01", "node-01", "rack-01", "node-02"))
	<-started
	<-started
	leaf := rep.Admitted[0].ID
	got, err := e.CancelWith(testCtx(t), leaf, messages.ErrCancelledByOperator)
	if err != nil || got.Jobs != 1 {
		t.Fatalf("cancel of one child = %+v, %v", got, err)
	}
	waitTerminal(t, e, leaf)
	if s := mustGet(t, e, rep.Admitted[1].ID); s.State.IsTerminal() {
		t.Fatalf("the other child ended too: %+v", s)
	}
	if _, err := e.CancelWith(testCtx(t), rep.Parent.ID, nil); err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, e, rep.Parent.ID)
}

func TestACancelledJobsFailureNamesTheCause(t *testing.T) {
	e, _ := newEngine(t, Options{})
	started := make(chan struct{})
	// Like most hardware workflows, it reports the error its last call
	// returned, not its context's cause.
	wf := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		close(started)
		<-ctx.Done()
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "node n: "+ctx.Err().Error()))
	})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	<-started
	if _, err := e.CancelWith(testCtx(t), s.ID, messages.ErrCancelledByOperator); err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, e, s.ID)
	if got := mustGet(t, e, s.ID); got.State != messages.StateFailed || got.ErrorMessage != "cancelled by operator: node n: context canceled" ||
		!strings.Contains(got.ResultJSON, `"error_message":"cancelled by operator: node n: context canceled"`) {
		t.Fatalf("job cancelled by an operator: %+v", got)
	}

	// A plain cancel says so too; a workflow that names the cause itself
	// is left as it is.
	plain := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n2"}, messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		<-ctx.Done()
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "stopped: "+context.Cause(ctx).Error()))
	}))
	if _, err := e.Cancel(testCtx(t), plain.ID); err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, e, plain.ID)
	if got := mustGet(t, e, plain.ID); got.ErrorMessage != "stopped: job cancelled" {
		t.Fatalf("job that named its cause: %+v", got)
	}
}
