package actors

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/messages"
)

func TestShutdownRefusesNewJobCreation(t *testing.T) {
	e, _ := newEngine(t, Options{})
	signalled, err := e.BeginShutdown(testCtx(t))
	if err != nil || len(signalled) != 0 {
		t.Fatalf("%v %v", signalled, err)
	}
	_, err = e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, completes("", ""), nil)
	if ref := refusal(t, err, messages.ErrShuttingDown); ref.Message != "server is shutting down; new jobs are not accepted" {
		t.Fatalf("message %q", ref.Message)
	}
	_, err = e.CreateBatch(testCtx(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate}, nil, nil)
	refusal(t, err, messages.ErrShuttingDown)
}

func TestShutdownSignalsActiveLeafJobs(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	done := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "m"}, completes("Completed", ""))
	waitTerminal(t, e, done.ID)
	signalled, err := e.BeginShutdown(testCtx(t))
	if err != nil || len(signalled) != 1 || signalled[0] != s.ID {
		t.Fatalf("signalled %v %v", signalled, err)
	}
	waitTerminal(t, e, s.ID)
	if got := mustGet(t, e, s.ID); got.State != messages.StateFailed || got.ErrorMessage != "job cancelled" {
		t.Fatalf("got %+v", got)
	}
}

func TestDrainReturnsAfterJobsReachTerminal(t *testing.T) {
	e, _ := newEngine(t, Options{})
	saw := make(chan struct{})
	wf := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		<-ctx.Done()
		close(saw)
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "cancelled"))
	})
	mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	n, err := e.Drain(testCtx(t))
	if n != 1 || err != nil {
		t.Fatalf("drain %d %v", n, err)
	}
	<-saw
	if _, err := e.Get(context.Background(), "x", false); !errors.Is(err, messages.ErrEngineClosed) {
		t.Fatalf("engine still answering after drain: %v", err)
	}
}

func TestDrainReturnsZeroWithoutActiveJobs(t *testing.T) {
	e, _ := newEngine(t, Options{})
	if n, err := e.Drain(testCtx(t)); n != 0 || err != nil {
		t.Fatalf("drain %d %v", n, err)
	}
}

// signalWriter closes hit when a log line contains want.
type signalWriter struct {
	want string
	once sync.Once
	hit  chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.want) {
		w.once.Do(func() { close(w.hit) })
	}
	return len(p), nil
}

func TestDrainTimesOutWhenJobNeverTerminates(t *testing.T) {
	w := &signalWriter{want: "graceful shutdown wait timed out", hit: make(chan struct{})}
	e, _ := newEngine(t, Options{Logger: zerolog.New(w)})
	release := make(chan struct{})
	hung := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("stuck")
		<-release // ignores cancellation until the test lets it go
	})
	mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, hung)
	type result struct {
		n   int
		err error
	}
	out := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		n, err := e.Drain(ctx)
		out <- result{n, err}
	}()
	select {
	case <-w.hit:
	case <-time.After(10 * time.Second):
		t.Fatal("drain never gave up waiting")
	}
	// The job is still not terminal: Drain's wait gave up on it.
	close(release)
	r := <-out
	if r.n != 1 || !errors.Is(r.err, context.DeadlineExceeded) {
		t.Fatalf("drain %d %v", r.n, r.err)
	}
}
