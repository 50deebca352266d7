package actors

import (
	"context"
	"errors"
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
