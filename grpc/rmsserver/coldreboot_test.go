package rmsserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

func u32(v uint32) *uint32 { return &v }

// quickColdReboot asks for the shortest waits the API allows (1 s); the
// simulated rack runs 1000× faster than a real one.
func quickColdReboot(nodes *rmspb.NodeSet) *rmspb.ExecuteColdRebootRequest {
	return &rmspb.ExecuteColdRebootRequest{
		Nodes:                 nodes,
		DischargeFloorSeconds: u32(1), DischargePollMaxSeconds: u32(30),
		BmcUpFloorSeconds: u32(1), BmcUpPollMaxSeconds: u32(30),
		NvosHelloBackoffSeconds: u32(1), ComputeBootWaitSeconds: u32(1), PollIntervalSeconds: u32(1),
	}
}

func (s *simRack) jobStatus(t *testing.T, id string) *rmspb.JobStatus {
	t.Helper()
	resp, err := s.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: id})
	if err != nil {
		t.Fatalf("GetJobStatus(%s): %v", id, err)
	}
	return resp.GetJobStates()[0]
}

func TestColdRebootRunsToCompletionAndHoldsTheRack(t *testing.T) {
	s := startSimRack(t)
	resp, err := s.client.ExecuteColdReboot(rpcContext(t), quickColdReboot(nodeSet(s.nodes...)))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetJobId() == "" || r.GetStats().GetSuccessfulNodes() != 35 ||
		len(r.GetNodeResults()) != 0 ||
		r.GetMessage() != "Cold reboot started for 35 nodes. Use GetJobStatus with response.job_id to track per-stage progress." {
		t.Fatalf("ExecuteColdReboot = %v", r)
	}
	job := s.jobStatus(t, r.GetJobId())
	if job.GetNodeId() != s.nodes[0].RackID+":cold-reboot" || job.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
		t.Fatalf("coordinator = %v", job)
	}
	// Every node is held by a reservation child of the coordinator.
	all, err := s.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: r.GetJobId(), IncludeChildJobStates: true})
	if err != nil || len(all.GetJobStates()) != 36 || len(all.GetJobStates()[0].GetChildJobIds()) != 35 {
		t.Fatalf("coordinator with children = %d states (%v)", len(all.GetJobStates()), err)
	}
	for i, c := range all.GetJobStates()[1:] {
		if c.GetNodeId() != s.nodes[i].ID || c.GetParentJobId() != r.GetJobId() ||
			c.GetStateDescription() != "Reserved by cold reboot job "+r.GetJobId() {
			t.Fatalf("reservation %d = %v", i, c)
		}
	}

	// While it runs: a second cold reboot of the rack, a registered power
	// change and any other job on its nodes are refused.
	again, err := s.client.ExecuteColdReboot(rpcContext(t), quickColdReboot(nodeSet(s.nodes...)))
	if err != nil || again.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || again.GetResponse().GetJobId() != "" ||
		again.GetResponse().GetMessage() != "cold reboot not started: job already in progress for rack "+s.nodes[0].RackID+
			" node "+s.nodes[0].RackID+":cold-reboot (job_id "+r.GetJobId()+")" {
		t.Fatalf("second cold reboot = %v, %v", again.GetResponse(), err)
	}
	compute := s.ofKind(hw.KindCompute)[0]
	power, err := s.client.SetPowerState(rpcContext(t), &rmspb.SetPowerStateRequest{RackId: compute.RackID, NodeId: compute.ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if err != nil || power.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("SetPowerState during the cold reboot = %v, %v", power, err)
	}
	// Nor can a caller switch the shelves under the runbook.
	shelves := s.ofKind(hw.KindPowerShelf)
	batch, err := s.client.BatchSetPowerState(rpcContext(t), &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(shelves...),
		Operation: rmspb.PowerOperation_POWER_OPERATION_OFF})
	if err != nil || batch.GetResponse().GetStats().GetFailedNodes() != uint32(len(shelves)) ||
		!strings.HasPrefix(batch.GetResponse().GetNodeResults()[0].GetErrorMessage(), "job already in progress for rack "+shelves[0].RackID+" node "+shelves[0].ID) {
		t.Fatalf("BatchSetPowerState of the shelves during the cold reboot = %v, %v", batch.GetResponse(), err)
	}
	if running := s.jobStatus(t, r.GetJobId()); running.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_RUNNING &&
		!strings.HasPrefix(running.GetStateDescription(), "Rack reboot step ") {
		t.Fatalf("running description = %q", running.GetStateDescription())
	}

	if err := s.engine.Wait(waitContext(t), r.GetJobId()); err != nil {
		t.Fatal(err)
	}
	done := s.jobStatus(t, r.GetJobId())
	if done.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED {
		t.Fatalf("coordinator ended %v: %s", done.GetExecutionState(), done.GetErrorMessage())
	}
	var result struct {
		Status string
		Stages []struct{ Name, Status string }
	}
	if err := json.Unmarshal([]byte(done.GetResultJson()), &result); err != nil || result.Status != "completed" || len(result.Stages) != 9 {
		t.Fatalf("result_json = %s (%v)", done.GetResultJson(), err)
	}
	if done.GetStateDescription() != "Cold reboot completed" {
		t.Fatalf("completion description %q", done.GetStateDescription())
	}

	// Afterwards the rack is free again.
	after, err := s.client.SetPowerState(rpcContext(t), &rmspb.SetPowerStateRequest{RackId: compute.RackID, NodeId: compute.ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if err != nil || after.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("SetPowerState after the cold reboot = %v, %v", after, err)
	}
}

func TestColdRebootFailsFastWhenAShelfNeverComesBack(t *testing.T) {
	s := startSimRack(t)
	shelf := s.ofKind(hw.KindPowerShelf)[0]
	if err := s.device(t, shelf.ID).FailPowerOn(true); err != nil {
		t.Fatal(err)
	}
	req := quickColdReboot(nodeSet(s.nodes...))
	req.BmcUpPollMaxSeconds = u32(2)
	resp, err := s.client.ExecuteColdReboot(rpcContext(t), req)
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("ExecuteColdReboot = %v, %v", resp, err)
	}
	id := resp.GetResponse().GetJobId()
	if err := s.engine.Wait(waitContext(t), id); err != nil {
		t.Fatal(err)
	}
	job := s.jobStatus(t, id)
	if job.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED ||
		job.GetErrorCode() != rmspb.JobError_JOB_ERROR_TIMEOUT || !strings.Contains(job.GetErrorMessage(), shelf.ID) ||
		!strings.Contains(job.GetResultJson(), `"current_stage":"verify_bmc_up"`) {
		t.Fatalf("job = %v", job)
	}
	// Fail-fast freed the rack: a new cold reboot is admitted.
	s.device(t, shelf.ID).FailPowerOn(false)
	next, err := s.client.ExecuteColdReboot(rpcContext(t), quickColdReboot(nodeSet(s.nodes...)))
	if err != nil || next.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("cold reboot after a failed one = %v, %v", next.GetResponse(), err)
	}
	// The engine cancels the admitted run when the test ends.
}

func TestColdRebootAdmissionIsAllOrNothing(t *testing.T) {
	s := startSimRack(t)
	noSwitches := append(append([]hw.Node(nil), s.ofKind(hw.KindCompute)...), s.ofKind(hw.KindPowerShelf)...)
	resp, err := s.client.ExecuteColdReboot(rpcContext(t), quickColdReboot(nodeSet(noSwitches...)))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetJobId() != "" || r.GetStats().GetFailedNodes() != uint32(len(noSwitches)) ||
		!strings.Contains(r.GetMessage(), "0 switches") {
		t.Fatalf("refused request = %v", r)
	}
	// A duplicate is refused as a duplicate, naming the node.
	dup := append(append([]hw.Node(nil), s.nodes...), s.nodes[3])
	resp, err = s.client.ExecuteColdReboot(rpcContext(t), quickColdReboot(nodeSet(dup...)))
	if err != nil {
		t.Fatal(err)
	}
	r = resp.GetResponse()
	wantDup := "duplicate target rack_id/node_id: " + s.nodes[3].RackID + "/" + s.nodes[3].ID
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(r.GetMessage(), wantDup) || strings.Contains(r.GetMessage(), "not one rack") ||
		r.GetNodeResults()[len(dup)-1].GetErrorMessage() != wantDup {
		t.Fatalf("duplicate node = %v", r)
	}
	// No node at all.
	resp, err = s.client.ExecuteColdReboot(rpcContext(t), &rmspb.ExecuteColdRebootRequest{})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE ||
		resp.GetResponse().GetMessage() != "No nodes specified in request" {
		t.Fatalf("empty cold reboot = %v, %v", resp, err)
	}
	// A node busy with another job refuses the whole request; nothing is
	// held by the refused request.
	busyNode := s.ofKind(hw.KindPowerShelf)[1]
	release := make(chan struct{})
	blocker, err := s.engine.Create(rpcContext(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: busyNode.RackID, NodeID: busyNode.ID},
		messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
			<-release
			_ = job.Complete("done", "")
		}), nil)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := s.client.ExecuteColdReboot(rpcContext(t), quickColdReboot(nodeSet(s.nodes...)))
	wantBusy := "job already in progress for rack " + busyNode.RackID + " node " + busyNode.ID + " (job_id " + blocker.ID + ")"
	if err != nil || busy.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE ||
		!strings.Contains(busy.GetResponse().GetMessage(), wantBusy) {
		t.Fatalf("cold reboot with a busy node = %v, %v", busy.GetResponse(), err)
	}
	for i, nr := range busy.GetResponse().GetNodeResults() {
		if (s.nodes[i].ID == busyNode.ID) != (nr.GetErrorMessage() == wantBusy) {
			t.Fatalf("node %s: %q", nr.GetNodeId(), nr.GetErrorMessage())
		}
	}
	if l, err := s.engine.Actors(rpcContext(t)); err != nil || l.HeldNodes != 1 {
		t.Fatalf("%d holds after a refused cold reboot, want only the blocker's (%v)", l.HeldNodes, err)
	}
	close(release)
	if err := s.engine.Wait(waitContext(t), blocker.ID); err != nil {
		t.Fatal(err)
	}

	// Nothing was left reserved: the whole rack is admitted at once.
	ok, err := s.client.ExecuteColdReboot(rpcContext(t), quickColdReboot(nodeSet(s.nodes...)))
	if err != nil || ok.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("valid request after a refused one = %v, %v", ok.GetResponse(), err)
	}
	// The engine cancels the admitted run when the test ends.
}

// laggingEngine admits a job and then loses the answer, as when the
// caller's deadline passes while the request waits in the registry's queue.
// admitted receives the id of each job it admitted.
type laggingEngine struct {
	JobEngine
	admitted chan<- string
}

func (l laggingEngine) CreateReserved(ctx context.Context, spec messages.JobSpec, wf messages.Workflow, res *messages.Reservation) (messages.CreateJobReply, error) {
	if _, err := l.JobEngine.CreateReserved(ctx, spec, wf, res); err != nil {
		return messages.CreateJobReply{}, err
	}
	l.admitted <- spec.ID
	return messages.CreateJobReply{}, fmt.Errorf("create job %s: %w: %w", spec.ID, messages.ErrRegistryNotReached, context.DeadlineExceeded)
}

func TestColdRebootAdmittedWithoutAnAnswerIsCancelled(t *testing.T) {
	s := startSimRack(t)
	admitted := make(chan string, 1)
	client := rmspb.NewRackManagerClient(startTestServer(t, Deps{
		Racks: s.racks, Nodes: s.runner, Jobs: laggingEngine{JobEngine: s.engine, admitted: admitted},
	}))
	req := quickColdReboot(nodeSet(s.nodes...))
	req.PrestageShutdownFloorSeconds = u32(60) // parks in the first stage
	_, err := client.ExecuteColdReboot(rpcContext(t), req)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("ExecuteColdReboot whose admission lost its answer: %v", err)
	}
	// The admitted runbook is cancelled, so the rack does not go through a
	// cold reboot nobody knows about, and every node is free again.
	var coordinator string
	select {
	case coordinator = <-admitted:
	default:
		t.Fatal("the engine admitted no cold reboot")
	}
	if err := s.engine.Wait(waitContext(t), coordinator); err != nil {
		t.Fatal(err)
	}
	if job := s.jobStatus(t, coordinator); job.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED ||
		!strings.Contains(job.GetErrorMessage(), "cancelled during prestage") {
		t.Fatalf("coordinator after the lost answer = %v", job)
	}
	if l, err := s.engine.Actors(rpcContext(t)); err != nil || l.HeldNodes != 0 {
		t.Fatalf("%d holds left (%v)", l.HeldNodes, err)
	}
}
