package actors

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

func mustLease(t *testing.T, e *Engine, req messages.AcquireLease) messages.AcquireLeaseReply {
	t.Helper()
	rep, err := e.Lease(testCtx(t), req)
	if err != nil {
		t.Fatalf("lease: %v", err)
	}
	return rep
}

func node(rack, n string) messages.NodeRef { return messages.NodeRef{RackID: rack, NodeID: n} }

func TestOperationLeaseIsRefusedOnANodeAJobHolds(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	job := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "n"}, g)
	rep := mustLease(t, e, messages.AcquireLease{Operation: "SetPowerState", Nodes: []messages.NodeRef{node("r", "n")}})
	want := "job already in progress for rack r node n (job_id " + job.ID + ")"
	if rep.Err == nil || rep.Err.Error() != want || !errors.Is(rep.Err, messages.ErrNodeBusy) {
		t.Fatalf("lease on a held node: %v, want %q", rep.Err, want)
	}
	if l := listed(t, e); l.HeldNodes != 1 {
		t.Fatalf("a refused lease holds %d nodes", l.HeldNodes)
	}
	close(g.release)
	waitTerminal(t, e, job.ID)
	rep = mustLease(t, e, messages.AcquireLease{ID: "after", Operation: "SetPowerState", Nodes: []messages.NodeRef{node("r", "n")}})
	if rep.Err != nil {
		t.Fatalf("lease once the job ended: %v", rep.Err)
	}
}

func TestJobIsRefusedOnANodeAnOperationHolds(t *testing.T) {
	e, _ := newEngine(t, Options{})
	rep := mustLease(t, e, messages.AcquireLease{ID: "l1", Operation: "BatchSetPowerState", Nodes: []messages.NodeRef{node("r", "n")}})
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""), nil)
	ref := refusal(t, err, messages.ErrNodeBusy)
	if ref.Message != "BatchSetPowerState already in progress for rack r node n" || ref.Code != messages.ErrorUpdateInProgress {
		t.Fatalf("refusal %+v", ref)
	}
	if err := e.Release(testCtx(t), "l1"); err != nil {
		t.Fatal(err)
	}
	if err := e.Release(testCtx(t), "l1"); err != nil {
		t.Fatalf("second release: %v", err)
	}
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", "")).ID)
	if l := listed(t, e); l.HeldNodes != 0 || len(l.locks) != 0 {
		t.Fatalf("held %d, lock actors %d", l.HeldNodes, len(l.locks))
	}
}

func TestPartialLeaseGrantsTheFreeNodesOnly(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	busy := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "b"}, g)
	rep := mustLease(t, e, messages.AcquireLease{ID: "p", Operation: "BatchSetPowerState", Partial: true,
		Nodes: []messages.NodeRef{node("r", "a"), node("r", "b"), node("r", "c"), node("r", "a"), node("r", "")}})
	if rep.Err != nil {
		t.Fatalf("partial lease: %v", rep.Err)
	}
	got := make([]string, len(rep.Refused))
	for i, r := range rep.Refused {
		if r != nil {
			got[i] = r.Message
		}
	}
	want := []string{"", "job already in progress for rack r node b (job_id " + busy.ID + ")", "",
		"duplicate target rack_id/node_id: r/a", "node_id is empty"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("refusals\n got %q\nwant %q", got, want)
	}
	if l := listed(t, e); l.HeldNodes != 3 || len(l.locks) != 3 {
		t.Fatalf("held %d nodes with %d lock actors, want 3 (a, c and the job's b)", l.HeldNodes, len(l.locks))
	}
	if err := e.Release(testCtx(t), "p"); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	waitTerminal(t, e, busy.ID)
	if l := listed(t, e); l.HeldNodes != 0 {
		t.Fatalf("%d nodes still held", l.HeldNodes)
	}
}

func TestAllOrNothingLeaseHoldsNothingWhenOneNodeIsBusy(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	busy := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "b"}, g)
	rep := mustLease(t, e, messages.AcquireLease{Operation: "SetPowerState", Nodes: []messages.NodeRef{node("r", "a"), node("r", "b")}})
	if !errors.Is(rep.Err, messages.ErrNodeBusy) || rep.Refused[0] != nil || rep.Refused[1] == nil {
		t.Fatalf("reply %+v", rep)
	}
	if l := listed(t, e); l.HeldNodes != 1 {
		t.Fatalf("%d nodes held, want only the job's", l.HeldNodes)
	}
	close(g.release)
	waitTerminal(t, e, busy.ID)
}

func TestRackLeaseIsExclusive(t *testing.T) {
	e, _ := newEngine(t, Options{})
	first := mustLease(t, e, messages.AcquireLease{ID: "first", Operation: "SetPowerState", Racks: []string{"r"}, Nodes: []messages.NodeRef{node("r", "a")}})
	if first.Err != nil {
		t.Fatal(first.Err)
	}
	second := mustLease(t, e, messages.AcquireLease{Operation: "DeleteNode", Racks: []string{"r"}, Nodes: []messages.NodeRef{node("r", "z")}})
	if !errors.Is(second.Err, messages.ErrRackBusy) || second.Err.Error() != "rack r is busy: SetPowerState in progress; retry when it finishes" {
		t.Fatalf("second rack lease: %v", second.Err)
	}
	other := mustLease(t, e, messages.AcquireLease{Operation: "SetPowerState", Racks: []string{"r2"}})
	if other.Err != nil {
		t.Fatalf("another rack: %v", other.Err)
	}
	// A rack lease is the rack's power domain: no node of it is admitted
	// while it is held, and the refusal names the holder.
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "z"}, completes("Completed", ""), nil)
	if !errors.Is(err, messages.ErrRackBusy) || !strings.Contains(err.Error(), "SetPowerState") {
		t.Fatalf("a job on a node of a rack whose domain is held: %v", err)
	}
	if err := e.Release(testCtx(t), "first"); err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "z"}, completes("Completed", "")).ID)
}

func TestOperationLeaseLapsesAfterItsTTL(t *testing.T) {
	e, _ := newEngine(t, Options{})
	rep := mustLease(t, e, messages.AcquireLease{ID: "forgotten", Operation: "SetPowerState", Nodes: []messages.NodeRef{node("r", "n")}, TTL: 20 * time.Millisecond})
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	// The holder never releases it; the lock actor's timer ends it.
	eventually(t, "the lease lapses", func() bool {
		l := listed(t, e)
		return l.HeldNodes == 0 && len(l.locks) == 0
	})
	waitTerminal(t, e, mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", "")).ID)
}

func TestKilledLockActorOfALeaseIsRespawnedAndTheLeaseKept(t *testing.T) {
	e, _ := newEngine(t, Options{})
	if rep := mustLease(t, e, messages.AcquireLease{ID: "l", Operation: "SetPowerState", Nodes: []messages.NodeRef{node("r", "n")}}); rep.Err != nil {
		t.Fatal(rep.Err)
	}
	l := listed(t, e)
	if _, err := e.Kill(testCtx(t), KillCrash, l.locks[0].Id); err != nil {
		t.Fatal(err)
	}
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""), nil)
	refusal(t, err, messages.ErrNodeBusy)
	if err := e.Release(testCtx(t), "l"); err != nil {
		t.Fatal(err)
	}
	if l := listed(t, e); l.HeldNodes != 0 || len(l.locks) != 0 {
		t.Fatalf("after release: %d held, %d lock actors", l.HeldNodes, len(l.locks))
	}
}

func TestKillRefusesActorsOutsideTheEngine(t *testing.T) {
	e, _ := newEngine(t, Options{})
	if killed, err := e.Kill(testCtx(t), KillStop, "someone-else"); !errors.Is(err, ErrUnknownActor) || len(killed) != 0 {
		t.Fatalf("kill of a foreign id: %v", err)
	}
}
