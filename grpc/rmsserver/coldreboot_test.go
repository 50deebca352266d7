package rmsserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetJobId() == "" || r.GetStats().GetSuccessfulNodes() != 35 {
		t.Fatalf("ExecuteColdReboot = %v", r)
	}
	job := s.jobStatus(t, r.GetJobId())
	if job.GetNodeId() != s.nodes[0].RackID+":cold-reboot" || job.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
		t.Fatalf("coordinator = %v", job)
	}

	// While it runs: a second cold reboot of the rack, a registered power
	// change and any other job on its nodes are refused.
	again, err := s.client.ExecuteColdReboot(rpcContext(t), quickColdReboot(nodeSet(s.nodes...)))
	if err != nil || again.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || again.GetResponse().GetJobId() != "" ||
		!strings.Contains(again.GetResponse().GetMessage(), "busy") {
		t.Fatalf("second cold reboot = %v, %v", again.GetResponse(), err)
	}
	compute := s.ofKind(hw.KindCompute)[0]
	power, err := s.client.SetPowerState(rpcContext(t), &rmspb.SetPowerStateRequest{RackId: compute.RackID, NodeId: compute.ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if err != nil || power.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("SetPowerState during the cold reboot = %v, %v", power, err)
	}
	if running := s.jobStatus(t, r.GetJobId()); running.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_RUNNING &&
		!strings.HasPrefix(running.GetStateDescription(), "Rack reboot step ") {
		t.Fatalf("running description = %q", running.GetStateDescription())
	}

	if err := s.engine.Wait(rpcContext(t), r.GetJobId()); err != nil {
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
	if err := s.engine.Wait(rpcContext(t), id); err != nil {
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
	// A node busy with another job refuses the whole request, and releases
	// the reservations and the rack guard taken so far.
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
	if err != nil || busy.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE ||
		!strings.Contains(busy.GetResponse().GetMessage(), "job already in progress for rack "+busyNode.RackID+" node "+busyNode.ID+" (job_id "+blocker.ID+")") {
		t.Fatalf("cold reboot with a busy node = %v, %v", busy.GetResponse(), err)
	}
	close(release)
	if err := s.engine.Wait(rpcContext(t), blocker.ID); err != nil {
		t.Fatal(err)
	}

	// Nothing was left reserved: the whole rack is admitted at once.
	ok, err := s.client.ExecuteColdReboot(rpcContext(t), quickColdReboot(nodeSet(s.nodes...)))
	if err != nil || ok.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("valid request after a refused one = %v, %v", ok.GetResponse(), err)
	}
	// The engine cancels the admitted run when the test ends.
}
