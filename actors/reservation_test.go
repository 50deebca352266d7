package actors

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/messages"
)

func rackNodes(rack string, n int) []messages.NodeRef {
	out := make([]messages.NodeRef, n)
	for i := range out {
		out[i] = node(rack, fmt.Sprintf("node-%02d", i))
	}
	return out
}

// reserve creates a coordinator job holding the rack and nodes.
func reserve(t *testing.T, e *Engine, rack string, nodes []messages.NodeRef, wf messages.Workflow) (messages.JobSnapshot, error) {
	t.Helper()
	res, err := e.ask(testCtx(t), &messages.CreateJob{
		Spec:     messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: rack, NodeID: rack + ":cold-reboot"},
		Workflow: wf,
		Reserve:  &messages.Reservation{HoldRack: true, Nodes: nodes, Description: "Reserved for cold reboot"},
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.(*messages.CreateJobReply)
	return rep.Job, rep.Err
}

func TestReservationHoldsEveryNodeAndTheRackAsVisibleChildren(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	nodes := rackNodes("r", 3)
	job, err := reserve(t, e, "r", nodes, g)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := e.Get(testCtx(t), job.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 4 || len(jobs[0].ChildIDs) != 3 {
		t.Fatalf("coordinator with %d jobs: %+v", len(jobs), jobs[0])
	}
	for i, c := range jobs[1:] {
		if c.NodeID != nodes[i].NodeID || c.ParentID != job.ID || c.State != messages.StateRunning || c.Description != "Reserved for cold reboot" {
			t.Fatalf("reservation %d: %+v", i, c)
		}
	}
	if l := listed(t, e); l.HeldNodes != 5 { // 3 nodes, the sentinel node and the rack
		t.Fatalf("%d holds", l.HeldNodes)
	}
	_, err = e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "node-01"}, completes("Completed", ""), nil)
	if ref := refusal(t, err, messages.ErrNodeBusy); !strings.Contains(ref.Message, jobs[2].ID) {
		t.Fatalf("refusal names %q, want the reservation child %s", ref.Message, jobs[2].ID)
	}
	rack := mustLease(t, e, messages.AcquireLease{Operation: "SetPowerState", Racks: []string{"r"}})
	if rack.Err == nil || rack.Err.Error() != "rack r is busy: cold reboot job "+job.ID+" in progress; retry when it finishes" {
		t.Fatalf("rack lease during the reservation: %v", rack.Err)
	}
	close(g.release)
	waitTerminal(t, e, job.ID)
	jobs, _ = e.Get(testCtx(t), job.ID, true)
	for _, c := range jobs[1:] {
		if c.State != messages.StateCompleted || c.Description != "cold reboot reservation released" {
			t.Fatalf("reservation after the job: %+v", c)
		}
	}
	if l := listed(t, e); l.HeldNodes != 0 || len(l.locks) != 0 {
		t.Fatalf("%d holds and %d lock actors left", l.HeldNodes, len(l.locks))
	}
}

func TestReservationIsAllOrNothingAndNamesEveryConflict(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	a := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "node-01"}, g)
	b := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "node-03"}, g)
	res, err := e.ask(testCtx(t), &messages.CreateJob{
		Spec:     messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r", NodeID: "r:cold-reboot"},
		Workflow: completes("Completed", ""),
		Reserve:  &messages.Reservation{HoldRack: true, Nodes: rackNodes("r", 4)},
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.(*messages.CreateJobReply)
	refusal(t, rep.Err, messages.ErrNodeBusy)
	// The rack's power domain is refused first (a node of it is held,
	// named), then each held node.
	if len(rep.Conflicts) != 3 || rep.Conflicts[0].NodeID != "" || !strings.Contains(rep.Conflicts[0].Message, a.ID) ||
		rep.Conflicts[1].NodeID != "node-01" || !strings.Contains(rep.Conflicts[1].Message, a.ID) ||
		rep.Conflicts[2].NodeID != "node-03" || !strings.Contains(rep.Conflicts[2].Message, b.ID) {
		t.Fatalf("conflicts %+v", rep.Conflicts)
	}
	if l := listed(t, e); l.HeldNodes != 2 || len(l.jobs) != 2 {
		t.Fatalf("a refused reservation left %d holds and %d job actors", l.HeldNodes, len(l.jobs))
	}
	close(g.release)
	waitTerminal(t, e, a.ID, b.ID)
}

// TestTerminalJobHasFreedItsNodes checks the invariant callers rely on: the
// moment any read shows a job terminal, every node it held can be taken.
func TestTerminalJobHasFreedItsNodes(t *testing.T) {
	e, _ := newEngine(t, Options{})
	nodes := rackNodes("r", 8)
	refs := append([]messages.NodeRef{node("r", "r:cold-reboot")}, nodes...)
	for round := range 30 {
		fail := round%2 == 1
		wf := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
			job.Progress("Rack reboot step 1")
			if fail {
				_ = job.Fail(messages.NewFailure(messages.ErrorTimeout, "shelf never came back"))
				return
			}
			_ = job.Complete("Cold reboot completed", "")
		})
		job, err := reserve(t, e, "r", nodes, wf)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var s messages.JobSnapshot
		eventually(t, "the job ends", func() bool { s = mustGet(t, e, job.ID); return s.IsTerminal() })
		rep := mustLease(t, e, messages.AcquireLease{ID: fmt.Sprintf("retry-%d", round), Operation: "retry",
			Racks: []string{"r"}, Nodes: refs})
		if rep.Err != nil {
			t.Fatalf("round %d: job %s is %s but a retry is refused: %v", round, job.ID, s.State, rep.Err)
		}
		if err := e.Release(testCtx(t), fmt.Sprintf("retry-%d", round)); err != nil {
			t.Fatal(err)
		}
	}
}

// An abandoned reservation reads terminal at once (children included), but
// keeps every hold until its workflow returns.
func TestReservationChildrenCompleteWhenTheJobIsAbandoned(t *testing.T) {
	e, _ := newEngine(t, Options{})
	wf := newStubborn(t)
	job, err := reserve(t, e, "r", rackNodes("r", 2), wf)
	if err != nil {
		t.Fatal(err)
	}
	wf.waitStarted(t)
	if _, err := e.Kill(testCtx(t), KillStop, "job-"+job.ID); err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, e, job.ID)
	assertAbandoned(t, mustGet(t, e, job.ID))
	jobs, err := e.Get(testCtx(t), job.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range jobs[1:] {
		if c.State != messages.StateCompleted {
			t.Fatalf("reservation child %+v", c)
		}
	}
	if l := listed(t, e); l.HeldNodes != 4 { // the rack, the job's node, two reserved nodes
		t.Fatalf("%d holds while the abandoned job's workflow still runs, want 4", l.HeldNodes)
	}
	wf.free()
	eventually(t, "the holds end once the workflow returned", func() bool { return listed(t, e).HeldNodes == 0 })
}
