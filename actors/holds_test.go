package actors

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/messages"
)

// stubborn is a workflow that ignores its context: it reports Running,
// then returns only when released (as a hardware call that never checks
// its context would).
type stubborn struct {
	started  chan string
	release  chan struct{}
	returned chan string
}

// newStubborn returns a stubborn workflow; it is released when the test
// ends, before the engine closes.
func newStubborn(t testing.TB) *stubborn {
	s := &stubborn{started: make(chan string, 16), release: make(chan struct{}), returned: make(chan string, 16)}
	t.Cleanup(s.free)
	return s
}

func (s *stubborn) Run(_ context.Context, job messages.Reporter) {
	job.Progress("ignoring cancellation")
	s.started <- job.ID()
	<-s.release
	s.returned <- job.ID()
}

// free lets every stubborn workflow return (once).
func (s *stubborn) free() {
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

func (s *stubborn) waitStarted(t testing.TB) string {
	t.Helper()
	select {
	case id := <-s.started:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("the stubborn workflow never started")
		return ""
	}
}

// heldOnly asserts that (rack, node) cannot be taken now.
func heldOnly(t *testing.T, e *Engine, rack, n string) {
	t.Helper()
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: rack, NodeID: n}, completes("Completed", ""), nil)
	refusal(t, err, messages.ErrNodeBusy)
}

// quarantinedIn waits until the listing shows id quarantined.
func quarantinedIn(t *testing.T, e *Engine, id string) QuarantinedJob {
	t.Helper()
	var q QuarantinedJob
	eventually(t, "the job is listed quarantined", func() bool {
		for _, j := range listed(t, e).Quarantined {
			if j.JobID == id {
				q = j
				return true
			}
		}
		return false
	})
	return q
}

func TestCancelledWorkflowThatDoesNotReturnIsQuarantined(t *testing.T) {
	logs := &logLines{}
	e, _ := newEngine(t, Options{QuarantineAfter: 20 * time.Millisecond, Logger: zerolog.New(logs).Level(zerolog.InfoLevel)})
	wf := newStubborn(t)
	job := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	wf.waitStarted(t)
	if _, err := e.Cancel(testCtx(t), job.ID); err != nil {
		t.Fatal(err)
	}
	q := quarantinedIn(t, e, job.ID)
	if q.RackID != "r" || q.NodeID != "n" || len(q.Held) != 1 || q.Held[0] != "r/n" || q.State != messages.StateRunning {
		t.Fatalf("quarantined %+v", q)
	}
	s := mustGet(t, e, job.ID)
	if !s.Quarantined || !strings.Contains(s.Description, "quarantined") {
		t.Fatalf("job status does not say quarantined: %+v", s)
	}
	heldOnly(t, e, "r", "n")
	lines := logs.with("job quarantined: its workflow has not returned since it was cancelled; its nodes stay held until it does or an operator releases them", job.ID)
	if len(lines) != 1 || lines[0]["level"] != "error" || lines[0]["rack_id"] != "r" || lines[0]["node_id"] != "n" {
		t.Fatalf("quarantine log lines %v", lines)
	}
}

func TestOperatorReleasesAQuarantinedJob(t *testing.T) {
	e, _ := newEngine(t, Options{QuarantineAfter: 20 * time.Millisecond})
	wf := newStubborn(t)
	job := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	wf.waitStarted(t)
	if _, err := e.ReleaseQuarantined(testCtx(t), job.ID); !errors.Is(err, ErrNotQuarantined) {
		t.Fatalf("release of a running job: %v", err)
	}
	if _, err := e.Cancel(testCtx(t), job.ID); err != nil {
		t.Fatal(err)
	}
	quarantinedIn(t, e, job.ID)
	if n := e.QuarantinedJobs(); n != 1 {
		t.Fatalf("QuarantinedJobs %d with one job quarantined", n)
	}
	q, err := e.ReleaseQuarantined(testCtx(t), job.ID)
	if err != nil || q.State != messages.StateFailed || len(q.Held) != 1 || q.Held[0] != "r/n" {
		t.Fatalf("release: %+v, %v", q, err)
	}
	s := mustGet(t, e, job.ID)
	if s.State != messages.StateFailed || s.Quarantined || !strings.Contains(s.ErrorMessage, "released by an operator") {
		t.Fatalf("released job %+v", s)
	}
	if l := listed(t, e); l.HeldNodes != 0 || len(l.Quarantined) != 0 {
		t.Fatalf("after release: %d held, quarantined %+v", l.HeldNodes, l.Quarantined)
	}
	if n := e.QuarantinedJobs(); n != 0 {
		t.Fatalf("QuarantinedJobs %d after the release", n)
	}
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", "")).ID)
	wf.free() // its late return changes nothing
	<-wf.returned
	if s := mustGet(t, e, job.ID); s.State != messages.StateFailed || !strings.Contains(s.ErrorMessage, "released by an operator") {
		t.Fatalf("after the late return %+v", s)
	}
}

func TestQuarantinedWorkflowReturnFreesItsNodes(t *testing.T) {
	e, _ := newEngine(t, Options{QuarantineAfter: 20 * time.Millisecond})
	wf := newStubborn(t)
	job, err := reserve(t, e, "r", rackNodes("r", 2), wf)
	if err != nil {
		t.Fatal(err)
	}
	wf.waitStarted(t)
	e.sys.Root.Stop(actor.NewPID(e.sys.Address(), "job-"+job.ID))
	waitTerminal(t, e, job.ID)
	q := quarantinedIn(t, e, job.ID)
	if want := "r r/node-00 r/node-01 r/r:cold-reboot"; strings.Join(q.Held, " ") != want || q.State != messages.StateFailed {
		t.Fatalf("quarantined %+v, want held %s", q, want)
	}
	heldOnly(t, e, "r", "node-01")
	if n := e.QuarantinedJobs(); n != 1 {
		t.Fatalf("QuarantinedJobs %d with one job quarantined", n)
	}
	wf.free()
	eventually(t, "the nodes are free once the workflow returned", func() bool {
		l := listed(t, e)
		return l.HeldNodes == 0 && len(l.Quarantined) == 0
	})
	if s := mustGet(t, e, job.ID); s.Quarantined {
		t.Fatalf("still quarantined after the return: %+v", s)
	}
	if n := e.QuarantinedJobs(); n != 0 {
		t.Fatalf("QuarantinedJobs %d after the workflow returned", n)
	}
}

func TestWorkflowReturnReachesARestartedRegistry(t *testing.T) {
	e, _ := newEngine(t, Options{})
	wf := newStubborn(t)
	job := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	wf.waitStarted(t)
	e.sys.Root.Stop(actor.NewPID(e.sys.Address(), "job-"+job.ID))
	waitTerminal(t, e, job.ID)
	heldOnly(t, e, "r", "n")
	if err := e.sys.Root.StopFuture(e.core.registry.Load()).Wait(); err != nil {
		t.Fatal(err)
	}
	wf.free() // may report to the stopped registry: it is re-sent to the new one
	eventually(t, "the node is free once the workflow returned", func() bool { return listed(t, e).HeldNodes == 0 })
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", "")).ID)
}

func TestJobIsTerminalOnlyOnceItsWorkflowReturned(t *testing.T) {
	e, _ := newEngine(t, Options{})
	done := make(chan struct{})
	var once sync.Once
	finish := func() { once.Do(func() { close(done) }) }
	t.Cleanup(finish)
	wf := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		_ = job.Complete("Completed", "")
		<-done // still at work after its terminal call
	})
	job := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	heldOnly(t, e, "r", "n")
	if s := mustGet(t, e, job.ID); s.IsTerminal() {
		t.Fatalf("job terminal while its workflow runs: %+v", s)
	}
	finish()
	waitTerminal(t, e, job.ID)
	if l := listed(t, e); l.HeldNodes != 0 {
		t.Fatalf("%d holds left once the job is terminal", l.HeldNodes)
	}
}

// The reaper quarantines a cancelled workflow whose bound has passed on
// the engine's clock, should the timer's check be lost (it is sent to a
// registry that may be restarting).
func TestReaperQuarantinesAnOverdueWorkflow(t *testing.T) {
	e, clk := newEngine(t, Options{QuarantineAfter: time.Hour})
	wf := newStubborn(t)
	job := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	wf.waitStarted(t)
	if _, err := e.Cancel(testCtx(t), job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Reap(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if q := listed(t, e).Quarantined; len(q) != 0 {
		t.Fatalf("quarantined before its bound: %+v", q)
	}
	clk.Advance(time.Hour)
	if _, err := e.Reap(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if q := listed(t, e).Quarantined; len(q) != 1 || q[0].JobID != job.ID {
		t.Fatalf("quarantined after its bound: %+v", q)
	}
}
