package actors

import (
	"context"
	"io"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store/storetest"
	"github.com/rmsd/rmsd/test/leakcheck"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakcheck.ProtoactorThrottle)
}

// newTestClock is a manual clock standing at a fixed instant.
func newTestClock() *storetest.SettableClock {
	return storetest.NewSettableClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
}

func quietSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
}

// newEngine starts an engine on a fresh actor system with a manual clock and
// a manual reaper; both are closed when the test ends.
func newEngine(t testing.TB, opts Options) (*Engine, *storetest.SettableClock) {
	t.Helper()
	clk := newTestClock()
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	if opts.ReaperTicks == nil {
		opts.ReaperTicks = make(chan time.Time)
	}
	sys := quietSystem()
	e, err := New(sys, opts)
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	t.Cleanup(func() {
		e.Close()
		sys.Shutdown()
	})
	return e, clk
}

func testCtx(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Workflows used by the tests.

func completes(desc, resultJSON string) messages.Workflow {
	return messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		job.Progress("working")
		_ = job.Complete(desc, resultJSON)
	})
}

func fails(code messages.JobError, msg string) messages.Workflow {
	return messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		_ = job.Fail(messages.NewFailure(code, msg))
	})
}

// gate is a workflow that reports Running, then waits for release (then
// completes) or for cancellation (then fails with "cancelled").
type gate struct {
	started chan string
	release chan struct{}
}

func newGate() *gate {
	return &gate{started: make(chan string, 1024), release: make(chan struct{})}
}

func (g *gate) Run(ctx context.Context, job messages.Reporter) {
	job.Progress("waiting at gate")
	g.started <- job.ID()
	select {
	case <-g.release:
		_ = job.Complete("Completed", `{"status":"completed"}`)
	case <-ctx.Done():
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "job cancelled"))
	}
}

func (g *gate) waitStarted(t testing.TB, n int) []string {
	t.Helper()
	var ids []string
	timeout := time.After(10 * time.Second)
	for len(ids) < n {
		select {
		case id := <-g.started:
			ids = append(ids, id)
		case <-timeout:
			t.Fatalf("only %d of %d workflows started", len(ids), n)
		}
	}
	return ids
}

// waitRunning waits for n gated workflows to start and for the registry
// to show each one Running at the gate: the gate's progress report reaches
// the registry after the workflow says it started.
func (g *gate) waitRunning(t testing.TB, e *Engine, n int) []string {
	t.Helper()
	ids := g.waitStarted(t, n)
	eventually(t, "the gated jobs read running at the gate", func() bool {
		for _, id := range ids {
			if s := mustGet(t, e, id); s.State != messages.StateRunning || s.Description != "waiting at gate" {
				return false
			}
		}
		return true
	})
	return ids
}

func mustCreate(t testing.TB, e *Engine, spec messages.JobSpec, wf messages.Workflow) messages.JobSnapshot {
	t.Helper()
	s, err := e.Create(testCtx(t), spec, wf, nil)
	if err != nil {
		t.Fatalf("create %+v: %v", spec, err)
	}
	return s
}

func mustGet(t testing.TB, e *Engine, id string) messages.JobSnapshot {
	t.Helper()
	jobs, err := e.Get(testCtx(t), id, false)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return jobs[0]
}

// eventually polls cond until it holds, failing the test (instead of
// hanging the suite) if it does not within ten seconds. For conditions that
// follow from a message already sent, with no event to wait on.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		runtime.Gosched()
	}
}

func waitTerminal(t testing.TB, e *Engine, ids ...string) {
	t.Helper()
	if err := e.Wait(testCtx(t), ids...); err != nil {
		t.Fatalf("wait terminal: %v", err)
	}
}
