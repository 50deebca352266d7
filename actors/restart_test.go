package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// actorList is the engine's actors by kind.
type actorList struct {
	Listing
	jobs, locks, batches []*actor.PID
}

func listed(t testing.TB, e *Engine) actorList {
	t.Helper()
	l, err := e.Actors(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	out := actorList{Listing: l}
	for _, a := range l.Actors {
		pid := actor.NewPID(e.sys.Address(), a.ID)
		switch a.Kind {
		case "job":
			out.jobs = append(out.jobs, pid)
		case "lock":
			out.locks = append(out.locks, pid)
		case "batch":
			out.batches = append(out.batches, pid)
		}
	}
	return out
}

func TestRegistryCrashLosesNoJobAndNoLock(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	g.waitStarted(t, 1)
	e.sys.Root.Send(e.core.registry.Load(), crashActor{})
	if got := mustGet(t, e, s.ID); got.ID != s.ID || got.State.IsTerminal() {
		t.Fatalf("job after restart %+v", got)
	}
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, g, nil)
	refusal(t, err, messages.ErrNodeBusy)
	close(g.release)
	waitTerminal(t, e, s.ID)
	if got := mustGet(t, e, s.ID); got.State != messages.StateCompleted {
		t.Fatalf("job %+v", got)
	}
}

func TestRegistryStopRespawnsWithEveryJobAndLock(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(g, "r", "a", "r", "b"))
	g.waitStarted(t, 3)
	if err := e.sys.Root.StopFuture(e.core.registry.Load()).Wait(); err != nil {
		t.Fatal(err)
	}
	// Released while the registry may still be down: the job actors keep
	// their terminal reports until the new registry acknowledges them.
	close(g.release)
	waitTerminal(t, e, s.ID, rep.Parent.ID)
	for _, id := range append([]string{s.ID, rep.Parent.ID}, ids(rep.Admitted)...) {
		if got := mustGet(t, e, id); got.State != messages.StateCompleted {
			t.Fatalf("job %s: %+v", id, got)
		}
	}
	if l := listed(t, e); l.HeldNodes != 0 {
		t.Fatalf("%d nodes still locked", l.HeldNodes)
	}
}

// A stopped job actor's job reads Failed at once, but its node stays held
// until its workflow, which may be in the middle of hardware I/O, returns.
func TestStoppedJobActorSealsJobFailedAndFreesNodeWhenItsWorkflowReturns(t *testing.T) {
	e, _ := newEngine(t, Options{})
	wf := newStubborn(t)
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	wf.waitStarted(t)
	e.sys.Root.Poison(actor.NewPID(e.sys.Address(), "job-"+s.ID))
	waitTerminal(t, e, s.ID)
	assertAbandoned(t, mustGet(t, e, s.ID))
	heldOnly(t, e, "r", "n")
	wf.free()
	eventually(t, "the node is free once the workflow returned", func() bool { return listed(t, e).HeldNodes == 0 })
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", "")).ID)
}

func TestCrashedJobActorIsNotRestarted(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	g.waitStarted(t, 1)
	e.sys.Root.Send(actor.NewPID(e.sys.Address(), "job-"+s.ID), crashActor{})
	waitTerminal(t, e, s.ID)
	assertAbandoned(t, mustGet(t, e, s.ID))
	select {
	case id := <-g.started:
		t.Fatalf("workflow restarted for %s", id)
	default:
	}
}

func TestKilledNodeLockKeepsNodeLocked(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, g)
	l := listed(t, e)
	if len(l.locks) != 1 {
		t.Fatalf("%d lock actors for one held node", len(l.locks))
	}
	if err := e.sys.Root.StopFuture(l.locks[0]).Wait(); err != nil {
		t.Fatal(err)
	}
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, g, nil)
	refusal(t, err, messages.ErrNodeBusy)
	if l2 := listed(t, e); len(l2.locks) != 1 || l2.locks[0].Id == l.locks[0].Id {
		t.Fatalf("lock actor not replaced: %v", l2.locks)
	}
	close(g.release)
	waitTerminal(t, e, s.ID)
	if l3 := listed(t, e); len(l3.locks) != 0 || l3.HeldNodes != 0 {
		t.Fatalf("lock left behind: %+v", l3)
	}
}

func TestKilledBatchParentStillAggregates(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(g, "r", "a", "r", "b"))
	l := listed(t, e)
	if len(l.batches) != 1 {
		t.Fatalf("%d batch actors", len(l.batches))
	}
	e.sys.Root.Send(l.batches[0], crashActor{})
	close(g.release)
	waitTerminal(t, e, rep.Parent.ID)
	if p := mustGet(t, e, rep.Parent.ID); p.State != messages.StateCompleted {
		t.Fatalf("parent %+v", p)
	}
}
