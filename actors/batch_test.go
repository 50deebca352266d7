package actors

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

func targets(wf messages.Workflow, pairs ...string) []messages.BatchTarget {
	var out []messages.BatchTarget
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, messages.BatchTarget{RackID: pairs[i], NodeID: pairs[i+1], Workflow: wf})
	}
	return out
}

func mustBatch(t *testing.T, e *Engine, typ messages.JobType, ts []messages.BatchTarget) messages.CreateBatchReply {
	t.Helper()
	rep, err := e.CreateBatch(testCtx(t), messages.JobSpec{Type: typ}, ts, nil)
	if err != nil {
		t.Fatalf("create batch: %v", err)
	}
	return rep
}

func ids(snaps []messages.JobSnapshot) []string {
	out := make([]string, len(snaps))
	for i, s := range snaps {
		out[i] = s.ID
	}
	return out
}

func TestCreateBatchAdmitsEveryTargetInOrder(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(g, "rack-01", "node-01", "rack-01", "node-02"))
	if len(rep.Admitted) != 2 || len(rep.Rejected) != 0 {
		t.Fatalf("reply %+v", rep)
	}
	if rep.Admitted[0].NodeID != "node-01" || rep.Admitted[1].NodeID != "node-02" {
		t.Fatalf("order %v", rep.Admitted)
	}
	jobs, err := e.Get(testCtx(t), rep.Parent.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	p := jobs[0]
	if !p.IsParent() || p.State != messages.StateRunning || len(jobs) != 3 || p.NodeID != "" {
		t.Fatalf("parent %+v (%d jobs)", p, len(jobs))
	}
	for i, c := range jobs[1:] {
		if c.ID != p.ChildIDs[i] || c.ParentID != p.ID {
			t.Fatalf("child %d: %+v", i, c)
		}
	}
	close(g.release)
	waitTerminal(t, e, rep.Parent.ID)
}

func TestCreateBatchRejectsARepeatedTarget(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(g, "rack-01", "node-01", "rack-01", "node-01", "rack-02", "node-01"))
	if len(rep.Admitted) != 2 || len(rep.Rejected) != 1 {
		t.Fatalf("reply %+v", rep)
	}
	if got := rep.Rejected[0].Message; got != "duplicate target rack_id/node_id: rack-01/node-01" {
		t.Fatalf("rejection %q", got)
	}
	if rep.Admitted[1].RackID != "rack-02" {
		t.Fatal("same node id in another rack was not admitted")
	}
	close(g.release)
	waitTerminal(t, e, rep.Parent.ID)
}

func TestCreateBatchReportsTheRefusalWhenANodeIsBusy(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	busy := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "c-01"}, g)
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(g, "r", "c-01", "r", "c-02"))
	if len(rep.Admitted) != 1 || len(rep.Rejected) != 1 {
		t.Fatalf("reply %+v", rep)
	}
	rej := rep.Rejected[0]
	if rej.Code != messages.ErrorUpdateInProgress || !strings.Contains(rej.Message, busy.ID) {
		t.Fatalf("rejection %+v", rej)
	}
	close(g.release)
	waitTerminal(t, e, rep.Parent.ID, busy.ID)
}

func TestChildJobCannotAcceptChildren(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(g, "r", "n"))
	child := rep.Admitted[0]
	_, err := e.Create(testCtx(t), messages.JobSpec{ParentID: child.ID, RackID: "r", NodeID: "m"}, g, nil)
	ref := refusal(t, err, messages.ErrParentUnavailable)
	if ref.Message != fmt.Sprintf("parent job %s is missing, terminal, or already a child", child.ID) {
		t.Fatalf("message %q", ref.Message)
	}
	close(g.release)
	waitTerminal(t, e, rep.Parent.ID)
}

func TestAttachChildRejectsTerminalParents(t *testing.T) {
	e, _ := newEngine(t, Options{})
	for _, out := range []messages.Outcome{messages.Completed("Completed", ""), messages.Failed(messages.NewFailure(messages.ErrorOther, "no"))} {
		rep := mustBatch(t, e, messages.TypeFirmwareUpdate, nil)
		if _, err := e.Seal(testCtx(t), rep.Parent.ID, out); err != nil {
			t.Fatal(err)
		}
		_, err := e.Create(testCtx(t), messages.JobSpec{ParentID: rep.Parent.ID, RackID: "r", NodeID: "n"}, completes("Completed", ""), nil)
		refusal(t, err, messages.ErrParentUnavailable)
		if p := mustGet(t, e, rep.Parent.ID); len(p.ChildIDs) != 0 {
			t.Fatalf("terminal parent gained children: %v", p.ChildIDs)
		}
	}
}

func TestChildrenCanBeAttachedAfterParentCreation(t *testing.T) {
	e, _ := newEngine(t, Options{})
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, nil)
	p := mustGet(t, e, rep.Parent.ID)
	if p.IsParent() || p.State != messages.StateRunning {
		t.Fatalf("empty parent %+v", p)
	}
	g := newGate()
	a := mustCreate(t, e, messages.JobSpec{ParentID: p.ID, RackID: "r", NodeID: "a"}, g)
	b := mustCreate(t, e, messages.JobSpec{ParentID: p.ID, RackID: "r", NodeID: "b"}, g)
	p = mustGet(t, e, p.ID)
	if !p.IsParent() || strings.Join(p.ChildIDs, ",") != a.ID+","+b.ID || a.ParentID != p.ID {
		t.Fatalf("parent %+v", p)
	}
	close(g.release)
	waitTerminal(t, e, p.ID)
	if p = mustGet(t, e, p.ID); p.State != messages.StateCompleted {
		t.Fatalf("parent %+v", p)
	}
}

func TestTopLevelJobCanBecomeParentWithoutLeavingActiveIndex(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	leaf := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "n"}, g)
	child := mustCreate(t, e, messages.JobSpec{ParentID: leaf.ID, RackID: "r", NodeID: "m"}, g)
	if p := mustGet(t, e, leaf.ID); !p.IsParent() {
		t.Fatalf("leaf with a child is not a parent: %+v", p)
	}
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "n"}, g, nil)
	refusal(t, err, messages.ErrNodeBusy)
	close(g.release)
	waitTerminal(t, e, leaf.ID, child.ID)
}

func TestSpawnedChildCompletionRefreshesParentWithoutPolling(t *testing.T) {
	e, _ := newEngine(t, Options{})
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(completes("Completed", `{"status":"completed"}`), "r", "a", "r", "b"))
	waitTerminal(t, e, rep.Parent.ID) // sealed by the BatchParent actor, no read involved
	p := mustGet(t, e, rep.Parent.ID)
	if p.State != messages.StateCompleted || p.Description != "All 2 firmware updates completed successfully" || p.ResultJSON != "" {
		t.Fatalf("parent %+v", p)
	}
}

func TestPanickingChildRefreshesParentWithoutPolling(t *testing.T) {
	e, _ := newEngine(t, Options{})
	boom := messages.WorkflowFunc(func(context.Context, messages.Reporter) { panic("boom") })
	rep := mustBatch(t, e, messages.TypeSwitchSystemImageUpdate, []messages.BatchTarget{
		{RackID: "r", NodeID: "sw-01", Workflow: completes("Completed", "")},
		{RackID: "r", NodeID: "sw-02", Workflow: boom},
	})
	waitTerminal(t, e, rep.Parent.ID)
	p := mustGet(t, e, rep.Parent.ID)
	if p.State != messages.StateFailed || p.ErrorCode != messages.ErrorOther ||
		p.ErrorMessage != "1 of 2 switch system image updates failed" ||
		p.Description != "Batch complete: 1/2 succeeded, 1 failed" {
		t.Fatalf("parent %+v", p)
	}
	want := fmt.Sprintf(`{"completed":1,"failed":1,"missing":0,"total":2,"failed_jobs":[{"job_id":"%s","node_id":"sw-02","error":"job task exited before recording a terminal state"}]}`, rep.Admitted[1].ID)
	if p.ResultJSON != want {
		t.Fatalf("result_json\n got %s\nwant %s", p.ResultJSON, want)
	}
}

func TestDirectlySealedParentStopsAggregation(t *testing.T) {
	e, _ := newEngine(t, Options{})
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, nil)
	got, err := e.Seal(testCtx(t), rep.Parent.ID, messages.Outcome{State: messages.StateFailed, Code: messages.ErrorOther, Message: "no firmware update jobs created"})
	if err != nil || got.State != messages.StateFailed || got.ErrorMessage != "no firmware update jobs created" || got.ResultJSON != "" {
		t.Fatalf("seal %+v %v", got, err)
	}
	if _, err := e.Seal(testCtx(t), rep.Parent.ID, messages.Completed("x", "")); err == nil {
		t.Fatal("second seal accepted")
	}
}

func TestParentWithRunningChildShowsProgress(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	hold := make(chan struct{})
	silent := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		select { // never reports progress: stays Queued
		case <-hold:
		case <-ctx.Done():
		}
		_ = job.Complete("Completed", "")
	})
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, []messages.BatchTarget{
		{RackID: "r", NodeID: "a", Workflow: completes("Completed", "")},
		{RackID: "r", NodeID: "b", Workflow: g},
		{RackID: "r", NodeID: "c", Workflow: silent},
	})
	waitTerminal(t, e, rep.Admitted[0].ID)
	g.waitStarted(t, 1)
	want := "Batch firmware update in progress (1/3 complete, 1 running, 1 queued)"
	var p messages.JobSnapshot
	for range 1000 { // the gate's progress report may still be in flight
		if p = mustGet(t, e, rep.Parent.ID); p.Description == want {
			break
		}
	}
	if p.Description != want || p.State != messages.StateRunning {
		t.Fatalf("parent %+v", p)
	}
	close(g.release)
	close(hold)
	waitTerminal(t, e, rep.Parent.ID)
}

func TestParentDetectsSkippedJobs(t *testing.T) {
	e, _ := newEngine(t, Options{})
	skip := completes("Completed", `{"status":"already_up_to_date"}`)
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(skip, "r", "a", "r", "b"))
	waitTerminal(t, e, rep.Parent.ID)
	if p := mustGet(t, e, rep.Parent.ID); p.Description != "All 2 nodes already up to date" || p.State != messages.StateCompleted {
		t.Fatalf("parent %+v", p)
	}
	rep = mustBatch(t, e, messages.TypeFirmwareUpdate, []messages.BatchTarget{
		{RackID: "r", NodeID: "a", Workflow: skip},
		{RackID: "r", NodeID: "b", Workflow: completes("Completed", `{"status":"completed"}`)},
	})
	waitTerminal(t, e, rep.Parent.ID)
	if p := mustGet(t, e, rep.Parent.ID); p.Description != "1/2 firmware updates applied, 1 already up to date" {
		t.Fatalf("parent %+v", p)
	}
}

func TestParentAggregatesWithFailuresUsingFirmwareShape(t *testing.T) {
	e, _ := newEngine(t, Options{})
	childDoc := `{"status":"failed","phase":"poll","error_code":"ClientError","error_message":"task failed","target":{"component":"BMC","firmware_file":"fw.bin"},"redfish":{"code":"Base.1.0.GeneralError"}}`
	bad := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		_ = job.Fail(messages.Failure{Code: messages.ErrorClientError, Message: "task failed", ResultJSON: childDoc})
	})
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, []messages.BatchTarget{
		{RackID: "r", NodeID: "a", Workflow: completes("Completed", "")},
		{RackID: "r", NodeID: "b", Workflow: bad},
	})
	waitTerminal(t, e, rep.Parent.ID)
	p := mustGet(t, e, rep.Parent.ID)
	if p.Description != "Batch complete: 1/2 succeeded, 1 failed" || p.ErrorMessage != "1 of 2 firmware updates failed" {
		t.Fatalf("parent %+v", p)
	}
	want := fmt.Sprintf(`{"completed":1,"failed":1,"missing":0,"total":2,"failed_jobs":[{"job_id":"%s","node_id":"b","error_code":"ClientError","error":"task failed","summary":"task failed","result":{"status":"failed","phase":"poll","error_code":"ClientError","error_message":"task failed","target":{"component":"BMC","firmware_file":"fw.bin"},"redfish":{"code":"Base.1.0.GeneralError"}}}]}`, rep.Admitted[1].ID)
	if p.ResultJSON != want {
		t.Fatalf("result_json\n got %s\nwant %s", p.ResultJSON, want)
	}
}

func TestUntypedParentIsNeverAggregated(t *testing.T) {
	e, _ := newEngine(t, Options{})
	rep := mustBatch(t, e, messages.TypeNone, targets(completes("Completed", ""), "r", "a"))
	waitTerminal(t, e, rep.Admitted[0].ID)
	if _, err := e.Reap(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if p := mustGet(t, e, rep.Parent.ID); p.State != messages.StateRunning {
		t.Fatalf("untyped parent aggregated: %+v", p)
	}
}

func TestReadingAnOpenParentChangesNothing(t *testing.T) {
	e, clk := newEngine(t, Options{})
	g := newGate()
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(g, "r", "a", "r", "b", "r", "c"))
	g.waitStarted(t, 3)
	var first messages.JobSnapshot
	// The children's progress reports reach the registry after they start.
	eventually(t, "three children run", func() bool {
		first = mustGet(t, e, rep.Parent.ID)
		return strings.Contains(first.Description, "3 running")
	})
	clk.Advance(time.Hour)
	for range 3 {
		again := mustGet(t, e, rep.Parent.ID)
		if !again.UpdatedAt.Equal(first.UpdatedAt) || again.Description != first.Description {
			t.Fatalf("a read changed the parent: %+v then %+v", first, again)
		}
	}
	if first.Description != "Batch firmware update in progress (0/3 complete, 3 running)" {
		t.Fatalf("description %q", first.Description)
	}
	close(g.release)
	waitTerminal(t, e, rep.Parent.ID)
	if p := mustGet(t, e, rep.Parent.ID); !p.UpdatedAt.After(first.UpdatedAt) || p.Description != "All 3 firmware updates completed successfully" {
		t.Fatalf("settled parent %+v", p)
	}
}
