package actors

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

func refusal(t *testing.T, err error, reason error) *messages.RefusedError {
	t.Helper()
	var ref *messages.RefusedError
	if !errors.As(err, &ref) || !errors.Is(err, reason) {
		t.Fatalf("want refusal %v, got %v", reason, err)
	}
	return ref
}

func TestCreateIfNodeIdleRejectsQueuedAndRunningJobForSameNode(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	held := mustCreate(t, e, messages.JobSpec{RackID: "rack-01", NodeID: "node-01"}, g)
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "rack-01", NodeID: "node-01"}, g, nil)
	ref := refusal(t, err, messages.ErrNodeBusy)
	want := fmt.Sprintf("job already in progress for rack rack-01 node node-01 (job_id %s)", held.ID)
	if ref.Message != want || ref.Code != messages.ErrorUpdateInProgress {
		t.Fatalf("refusal %q (%v), want %q", ref.Message, ref.Code, want)
	}
	g.waitStarted(t, 1) // now Running
	_, err = e.Create(testCtx(t), messages.JobSpec{RackID: "rack-01", NodeID: "node-01"}, g, nil)
	refusal(t, err, messages.ErrNodeBusy)
	close(g.release)
	waitTerminal(t, e, held.ID)
}

func TestCreateIfNodeIdleAllowsAfterTerminalJob(t *testing.T) {
	e, _ := newEngine(t, Options{})
	a := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	waitTerminal(t, e, a.ID)
	b := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	if a.ID == b.ID {
		t.Fatal("same id reused")
	}
	waitTerminal(t, e, b.ID)
}

func TestNodeKeysArePerRackAndEmptyNodeNeverBusy(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	ids := []string{
		mustCreate(t, e, messages.JobSpec{RackID: "rack-a", NodeID: "n"}, g).ID,
		mustCreate(t, e, messages.JobSpec{RackID: "rack-b", NodeID: "n"}, g).ID,
		mustCreate(t, e, messages.JobSpec{RackID: "rack-a", NodeID: ""}, g).ID,
		mustCreate(t, e, messages.JobSpec{RackID: "rack-a", NodeID: ""}, g).ID,
	}
	close(g.release)
	waitTerminal(t, e, ids...)
}

func TestCreateRefusesAtCapacity(t *testing.T) {
	e, _ := newEngine(t, Options{MaxTrackedJobs: 2})
	g := newGate()
	a := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "1"}, g)
	b := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "2"}, g)
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "3"}, g, nil)
	ref := refusal(t, err, messages.ErrAtCapacity)
	if ref.Message != "job tracker at capacity: 2 jobs in flight (limit 2; job: 2); retry after in-flight jobs finish" || ref.Code != messages.ErrorInternal {
		t.Fatalf("refusal %q %v", ref.Message, ref.Code)
	}
	close(g.release)
	waitTerminal(t, e, a.ID, b.ID)
}

func TestNodeBusyIsReportedBeforeCapacity(t *testing.T) {
	e, _ := newEngine(t, Options{MaxTrackedJobs: 1})
	g := newGate()
	a := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, g, nil)
	refusal(t, err, messages.ErrNodeBusy)
	_, err = e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "other"}, g, nil)
	refusal(t, err, messages.ErrAtCapacity)
	close(g.release)
	waitTerminal(t, e, a.ID)
}

func TestEarlyAdmissionRejectionsDoNotSweepExpiredJobs(t *testing.T) {
	e, clk := newEngine(t, Options{MaxTrackedJobs: 2, TerminalJobTTL: time.Minute})
	old := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "old"}, completes("Completed", ""))
	waitTerminal(t, e, old.ID)
	g := newGate()
	busy := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	clk.Advance(2 * time.Minute)
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, g, nil)
	refusal(t, err, messages.ErrNodeBusy)
	mustGet(t, e, old.ID)
	if _, err := e.BeginShutdown(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	_, err = e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "x"}, g, nil)
	refusal(t, err, messages.ErrShuttingDown)
	mustGet(t, e, old.ID)
	waitTerminal(t, e, busy.ID) // cancelled by shutdown
}

func TestAdmissionsBelowCapacityDoNotSweepExpiredJobs(t *testing.T) {
	e, clk := newEngine(t, Options{MaxTrackedJobs: 10, TerminalJobTTL: time.Minute})
	old := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "old"}, completes("Completed", ""))
	waitTerminal(t, e, old.ID)
	clk.Advance(2 * time.Minute)
	leaf := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	if _, err := e.CreateBatch(testCtx(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate}, nil, nil); err != nil {
		t.Fatal(err)
	}
	mustGet(t, e, old.ID)
	waitTerminal(t, e, leaf.ID)
}

func TestCapacityEvictsTerminalJobBeforeItsTTL(t *testing.T) {
	e, _ := newEngine(t, Options{MaxTrackedJobs: 1, TerminalJobTTL: time.Hour})
	old := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	waitTerminal(t, e, old.ID)
	// Terminal but not expired: it no longer blocks admission, it makes room.
	fresh := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	if _, err := e.Get(testCtx(t), old.ID, false); !errors.Is(err, messages.ErrJobNotFound) {
		t.Fatalf("oldest terminal job still present: %v", err)
	}
	waitTerminal(t, e, fresh.ID)
}

func TestParentAdmissionSweepsOnlyUnderCapacityPressure(t *testing.T) {
	e, clk := newEngine(t, Options{MaxTrackedJobs: 1, TerminalJobTTL: time.Minute})
	old := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	waitTerminal(t, e, old.ID)
	clk.Advance(time.Minute)
	if _, err := e.CreateBatch(testCtx(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate}, nil, nil); err != nil {
		t.Fatalf("parent refused: %v", err)
	}
	if _, err := e.Get(testCtx(t), old.ID, false); !errors.Is(err, messages.ErrJobNotFound) {
		t.Fatalf("expired job still present: %v", err)
	}
}

func TestConcurrentSameNodeAdmissionAllowsExactlyOneJob(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	const n = 32
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n)
	ids := make(chan string, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, err := e.Create(context.Background(), messages.JobSpec{RackID: "r", NodeID: "n"}, g, nil)
			if err != nil {
				errs <- err
				return
			}
			ids <- s.ID
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	close(ids)
	if len(ids) != 1 || len(errs) != n-1 {
		t.Fatalf("%d admitted, %d refused", len(ids), len(errs))
	}
	for err := range errs {
		refusal(t, err, messages.ErrNodeBusy)
	}
	close(g.release)
	waitTerminal(t, e, <-ids)
}

func TestCancellationKeepsNodeBusyUntilTerminalTransition(t *testing.T) {
	e, _ := newEngine(t, Options{})
	cancelled := make(chan struct{})
	release := make(chan struct{})
	wf := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		<-ctx.Done()
		close(cancelled)
		<-release
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "job cancelled"))
	})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	ok, err := e.Cancel(testCtx(t), s.ID)
	if err != nil || !ok {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	<-cancelled
	_, err = e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, wf, nil)
	refusal(t, err, messages.ErrNodeBusy)
	close(release)
	waitTerminal(t, e, s.ID)
	next := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	waitTerminal(t, e, next.ID)
	if ok, _ := e.Cancel(testCtx(t), s.ID); ok {
		t.Fatal("cancel of a terminal job reported signalled")
	}
}

func TestCreateRequiresWorkflow(t *testing.T) {
	e, _ := newEngine(t, Options{})
	if _, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, nil, nil); !errors.Is(err, messages.ErrInvalidSpec) {
		t.Fatalf("err %v", err)
	}
}
