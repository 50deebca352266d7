package actors

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// crashOnce arms e to panic the registry once, in the middle of the next
// seal of a job whose id want accepts: after its terminal events are
// applied, before its locks are stopped, its parent told and its waiters
// answered. It reports whether the crash happened.
func crashOnce(e *Engine, want func(id string) bool) *atomic.Bool {
	var crashed atomic.Bool
	e.core.midSeal = func(id string) {
		if want(id) && crashed.CompareAndSwap(false, true) {
			panic("injected: registry crash between a seal's two halves")
		}
	}
	return &crashed
}

// waitBounded is Engine.Wait that fails the test when ids have not all
// ended within a generous bound: a stranded waiter would wait forever.
func waitBounded(t *testing.T, e *Engine, what string, ids ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Wait(ctx, ids...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestRegistryCrashMidSealAnswersTheWaiterAndStopsTheLock(t *testing.T) {
	e, _ := newEngine(t, Options{})
	var armed atomic.Bool
	crashed := crashOnce(e, func(string) bool { return armed.Load() })
	g := newGate()
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	g.waitRunning(t, e, 1)
	before := listed(t, e)
	if len(before.locks) != 1 {
		t.Fatalf("%d lock actors, want the job's one", len(before.locks))
	}
	waited := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		waited <- e.Wait(ctx, s.ID)
	}()
	eventually(t, "the caller subscribes", func() bool { return listed(t, e).Waiters == 1 })
	armed.Store(true)
	close(g.release)
	if err := <-waited; err != nil {
		t.Fatalf("the waiter of a job sealed by a crashing turn was stranded: %v", err)
	}
	if !crashed.Load() {
		t.Fatal("the injected crash did not happen")
	}
	after := listed(t, e)
	if after.Generation != before.Generation+1 {
		t.Fatalf("registry generation %d, want %d (one restart)", after.Generation, before.Generation+1)
	}
	if got := mustGet(t, e, s.ID); got.State != messages.StateCompleted {
		t.Fatalf("job after the crash: %+v", got)
	}
	lock := before.locks[0]
	eventually(t, "the sealed job's lock actor is stopped", func() bool {
		_, alive := e.sys.ProcessRegistry.Get(lock)
		return !alive
	})
	if l := listed(t, e); len(l.locks) != 0 || l.HeldNodes != 0 || l.Waiters != 0 {
		t.Fatalf("after the reconcile: %d locks, %d held, %d waiters", len(l.locks), l.HeldNodes, l.Waiters)
	}
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", "")).ID)
}

func TestRegistryCrashMidSealOfTheLastChildSettlesTheParent(t *testing.T) {
	e, _ := newEngine(t, Options{ReaperTicks: make(chan time.Time)}) // no reaper backstop
	var armed atomic.Bool
	crashed := crashOnce(e, func(string) bool { return armed.Load() })
	first, last := newGate(), newGate()
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, []messages.BatchTarget{
		{RackID: "r", NodeID: "n1", Workflow: first}, {RackID: "r", NodeID: "n2", Workflow: last},
	})
	first.waitRunning(t, e, 1)
	last.waitRunning(t, e, 1)
	// The first child fails (cancelled); its failure belongs in the verdict.
	if _, err := e.Cancel(testCtx(t), rep.Admitted[0].ID); err != nil {
		t.Fatal(err)
	}
	waitBounded(t, e, "the first child", rep.Admitted[0].ID)
	armed.Store(true)
	close(last.release)
	waitBounded(t, e, "the parent whose last child was sealed by a crashing turn", rep.Parent.ID)
	if !crashed.Load() {
		t.Fatal("the injected crash did not happen")
	}
	p := mustGet(t, e, rep.Parent.ID)
	if p.State != messages.StateFailed {
		t.Fatalf("parent with a failed child: %+v", p)
	}
	if l := listed(t, e); len(l.locks) != 0 || len(l.batches) != 0 || l.HeldNodes != 0 {
		t.Fatalf("after the reconcile: %d locks, %d batch actors, %d held", len(l.locks), len(l.batches), l.HeldNodes)
	}
}

// A crash in the middle of the seal of a job whose actor died while its
// workflow still runs: the terminal events are applied, the wait for the
// workflow's return is not yet recorded. The reconcile must not release
// the node the workflow still acts on; the return releases it.
func TestRegistryCrashMidSealKeepsTheHoldsOfAWorkflowThatStillRuns(t *testing.T) {
	e, _ := newEngine(t, Options{})
	var armed atomic.Bool
	crashed := crashOnce(e, func(string) bool { return armed.Load() })
	wf := newStubborn(t)
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	wf.waitStarted(t)
	before := listed(t, e).Generation
	armed.Store(true)
	e.sys.Root.Poison(actor.NewPID(e.sys.Address(), "job-"+s.ID))
	waitTerminal(t, e, s.ID)
	eventually(t, "the registry restarts after the injected crash", func() bool {
		return crashed.Load() && listed(t, e).Generation == before+1
	})
	assertAbandoned(t, mustGet(t, e, s.ID))
	heldOnly(t, e, "r", "n")
	if l := listed(t, e); l.HeldNodes != 1 {
		t.Fatalf("after the reconcile %d nodes held, want the running workflow's one", l.HeldNodes)
	}
	wf.free()
	eventually(t, "the node is free once the workflow returned", func() bool { return listed(t, e).HeldNodes == 0 })
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", "")).ID)
}
