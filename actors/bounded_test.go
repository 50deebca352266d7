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

func TestAWaitingCallerHoldsOneSubscription(t *testing.T) {
	e, _ := newEngine(t, Options{AskTimeout: 5 * time.Millisecond})
	g := newGate()
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Wait(ctx, s.ID) }()
	eventually(t, "twenty ask timeouts pass", func() bool {
		if l := listed(t, e); l.Waiters > 1 {
			t.Fatalf("%d subscriptions for one waiting caller", l.Waiters)
		}
		return e.waitChecks.Load() >= 20
	})
	if l := listed(t, e); l.Waiters != 1 {
		t.Fatalf("%d subscriptions for one waiting caller", l.Waiters)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("wait after cancel: %v", err)
	}
	// The caller's withdrawal is a message sent before Wait returned.
	eventually(t, "the subscription is withdrawn", func() bool { return listed(t, e).Waiters == 0 })
	close(g.release)
	waitTerminal(t, e, s.ID)
}

func TestWaitOutlivesARegistryRespawn(t *testing.T) {
	e, _ := newEngine(t, Options{AskTimeout: 20 * time.Millisecond})
	g := newGate()
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	done := make(chan error, 1)
	go func() { done <- e.Wait(testCtx(t), s.ID) }()
	eventually(t, "the caller subscribes", func() bool { return listed(t, e).Waiters == 1 })
	before := listed(t, e).Generation
	if err := e.sys.Root.StopFuture(e.core.registry.Load()).Wait(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a new registry starts", func() bool { return listed(t, e).Generation != before })
	close(g.release)
	if err := <-done; err != nil {
		t.Fatalf("wait across a respawn: %v", err)
	}
	if got := mustGet(t, e, s.ID); got.State != messages.StateCompleted {
		t.Fatalf("job %+v", got)
	}
}

// crashRequest is a request whose handling panics the registry.
type crashRequest struct{}

func (*crashRequest) crash() { panic("registry bug") }

func TestARequestThatCrashesTheRegistryIsRefusedNotRetried(t *testing.T) {
	e, _ := newEngine(t, Options{AskTimeout: 50 * time.Millisecond})
	before := listed(t, e).Generation
	req := &crashRequest{}
	_, err := e.ask(testCtx(t), req)
	if !errors.Is(err, messages.ErrRegistryCrashed) {
		t.Fatalf("crashing request: %v", err)
	}
	// The same request again (a retry) is refused without a second crash.
	if _, err := e.ask(testCtx(t), req); !errors.Is(err, messages.ErrRegistryCrashed) {
		t.Fatalf("retried crashing request: %v", err)
	}
	if after := listed(t, e).Generation; after != before+1 {
		t.Fatalf("registry started %d times for one bad request", after-before)
	}
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", "")).ID)
}

// lines collects log lines.
type lines struct {
	mu  sync.Mutex
	buf []string
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, string(p))
	return len(p), nil
}

func (l *lines) find(msg string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.buf {
		if strings.Contains(s, `"message":"`+msg) {
			return s
		}
	}
	return ""
}

// storeEngine starts an engine over a store the test can read after Close.
func storeEngine(t *testing.T, log *lines) (*Engine, *jobStore) {
	t.Helper()
	store := newJobStore()
	sys := quietSystem()
	e, err := newEngineWithStore(sys, Options{Logger: zerolog.New(log), ReaperTicks: make(chan time.Time)}, store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); sys.Shutdown() })
	return e, store
}

func TestCloseIsBoundedWhenAWorkflowIgnoresItsContext(t *testing.T) {
	log := &lines{}
	e, store := storeEngine(t, log)
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	deaf := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("Flashing BMC")
		close(started)
		<-release // ignores ctx
	})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, deaf)
	<-started
	const window = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), window)
	defer cancel()
	began := time.Now()
	n, err := e.Drain(ctx)
	took := time.Since(began)
	if n != 1 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("drain %d %v", n, err)
	}
	// Drain returned while the workflow still runs, bounded by the drain
	// window and the close grace, not by DefaultCloseTimeout: a generous
	// multiple of the bound is still far below the default's 30 s.
	if bound := window + closeGrace; took > 8*bound {
		t.Fatalf("Drain with a %v window took %v, more than 8× its bound of %v", window, took, bound)
	}
	rec := store.jobs[s.ID].snap
	want := `interrupted by shutdown of rmsd at stage "Flashing BMC"; the state of the hardware is unknown`
	if rec.State != messages.StateFailed || rec.ErrorCode != messages.ErrorInternal || rec.ErrorMessage != want {
		t.Fatalf("job after drain: %+v", rec)
	}
	// Its node stays held while the workflow runs: nothing is admitted on it
	// before the process exits (a restart frees it: no workflow runs then).
	if l, ok := store.leases[lockKey{"r", "n"}]; !ok || l.holder != s.ID || len(store.leases) != 1 {
		t.Fatalf("holds after drain %v, want only r/n held by %s", store.leases, s.ID)
	}
	if l := log.find("job interrupted by shutdown"); !strings.Contains(l, s.ID) || !strings.Contains(l, "Flashing BMC") {
		t.Fatalf("no interruption log line for %s: %q", s.ID, l)
	}
	if l := log.find("job workflows still running after shutdown"); !strings.Contains(l, s.ID) {
		t.Fatalf("no log line naming the stuck workflow: %q", l)
	}
}

func TestShutdownLetsAShieldedStepFinishWithinTheWindow(t *testing.T) {
	e, store := storeEngine(t, &lines{})
	inStep, finish := make(chan struct{}), make(chan struct{})
	softCancelled := make(chan error, 1)
	wf := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("Rack reboot step 1: powering off power shelves")
		step := messages.ShieldFromShutdown(ctx)
		close(inStep)
		<-ctx.Done()
		softCancelled <- context.Cause(ctx)
		select {
		case <-finish:
			_ = job.Complete("Rack reboot completed", "")
		case <-step.Done():
			_ = job.Fail(messages.NewFailure(messages.ErrorOther, "stopped half-way"))
		}
	})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	<-inStep
	drained := make(chan error, 1)
	go func() {
		_, err := e.Drain(testCtx(t))
		drained <- err
	}()
	if cause := <-softCancelled; !errors.Is(cause, messages.ErrShuttingDown) {
		t.Fatalf("cause %v", cause)
	}
	close(finish)
	if err := <-drained; err != nil {
		t.Fatalf("drain: %v", err)
	}
	if rec := store.jobs[s.ID].snap; rec.State != messages.StateCompleted {
		t.Fatalf("shielded step did not finish: %+v", rec)
	}
}

func TestDrainDeadlineStopsAShieldedStepAndSaysWhereItWas(t *testing.T) {
	e, store := storeEngine(t, &lines{})
	inStep := make(chan struct{})
	hardCause := make(chan error, 1)
	wf := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("Rack reboot step 4: powering on power shelves")
		step := messages.ShieldFromShutdown(ctx)
		close(inStep)
		<-step.Done()
		hardCause <- context.Cause(step)
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "cancelled"))
	})
	s := mustCreate(t, e, messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r", NodeID: "n"}, wf)
	<-inStep
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := e.Drain(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("drain: %v", err)
	}
	if cause := <-hardCause; !errors.Is(cause, messages.ErrInterrupted) {
		t.Fatalf("the shielded step ended with %v", cause)
	}
	rec := store.jobs[s.ID].snap
	if rec.State != messages.StateFailed || !strings.Contains(rec.ErrorMessage, `at stage "Rack reboot step 4: powering on power shelves"`) {
		t.Fatalf("job %+v", rec)
	}
}
