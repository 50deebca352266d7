package rmsserver

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

func TestBatchGetPowerStateOfAWholeRack(t *testing.T) {
	s := startSimRack(t)
	resp, err := s.client.BatchGetPowerState(rpcContext(t), &rmspb.BatchGetPowerStateRequest{Nodes: nodeSet(s.nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetStats().GetSuccessfulNodes() != 35 || len(resp.GetNodePowerStates()) != 35 ||
		r.GetMessage() != "Power state queried for 35/35 nodes" {
		t.Fatalf("BatchGetPowerState = %v", r)
	}
	for i, ps := range resp.GetNodePowerStates() {
		if ps.GetNodeId() != s.nodes[i].ID || (ps.GetPstate() != "ON" && ps.GetPstate() != "OFF") {
			t.Fatalf("state %d = %v (node %s)", i, ps, s.nodes[i].ID)
		}
	}
}

func TestBatchSetPowerStateMapsOperationsToResetTypes(t *testing.T) {
	s := startSimRack(t)
	compute := s.ofKind(hw.KindCompute)[:2]
	tests := []struct {
		op   rmspb.PowerOperation
		want string
	}{
		{rmspb.PowerOperation_POWER_OPERATION_OFF, "GracefulShutdown"},
		{rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF, "ForceOff"},
		{rmspb.PowerOperation_POWER_OPERATION_ON, "On"},
		{rmspb.PowerOperation_POWER_OPERATION_RESET, "PowerCycle"},
		{rmspb.PowerOperation_POWER_OPERATION_FORCE_RESTART, "ForceRestart"},
		{rmspb.PowerOperation_POWER_OPERATION_GRACEFUL_RESTART, "GracefulRestart"},
		{rmspb.PowerOperation_POWER_OPERATION_FORCE_ON, "ForceOn"},
		{rmspb.PowerOperation_POWER_OPERATION_GRACEFUL_SHUTDOWN, "GracefulShutdown"},
	}
	for _, tt := range tests {
		resp, err := s.client.BatchSetPowerState(rpcContext(t), &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(compute...), Operation: tt.op})
		if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS ||
			resp.GetResponse().GetMessage() != "Power operation completed for 2/2 nodes" {
			t.Fatalf("%v: %v, %v", tt.op, resp, err)
		}
		for _, n := range compute {
			resets := s.device(t, n.ID).Resets()
			if got := resets[len(resets)-1]; got != tt.want {
				t.Errorf("%v on %s sent ResetType %s, want %s", tt.op, n.ID, got, tt.want)
			}
		}
	}
}

func TestForceOffIsVisibleToTheNextRead(t *testing.T) {
	s := startSimRack(t)
	shelf := s.ofKind(hw.KindPowerShelf)[0]
	compute := s.ofKind(hw.KindCompute)[0]
	resp, err := s.client.BatchSetPowerState(rpcContext(t), &rmspb.BatchSetPowerStateRequest{
		Nodes: nodeSet(compute, shelf), Operation: rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("BatchSetPowerState = %v, %v", resp, err)
	}
	got, err := s.client.BatchGetPowerState(rpcContext(t), &rmspb.BatchGetPowerStateRequest{Nodes: nodeSet(compute, shelf)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range got.GetNodePowerStates() {
		if ps.GetPstate() != "OFF" {
			t.Errorf("%s reads %s after FORCE_OFF", ps.GetNodeId(), ps.GetPstate())
		}
	}
	if s.device(t, shelf.ID).PowerState() != "Off" {
		t.Errorf("simulated shelf is %s", s.device(t, shelf.ID).PowerState())
	}
}

func TestBatchPowerPartialFailure(t *testing.T) {
	s := startSimRack(t)
	compute := s.ofKind(hw.KindCompute)
	s.device(t, compute[1].ID).SetCredentials("admin", "rotated-elsewhere")
	if err := s.device(t, compute[2].ID).SetUnreachable(true); err != nil {
		t.Fatal(err)
	}
	noBMC := compute[3]
	noBMC.BMC = nil
	nodes := []hw.Node{compute[0], compute[1], compute[2], noBMC, compute[0]}
	resp, err := s.client.BatchGetPowerState(rpcContext(t), &rmspb.BatchGetPowerStateRequest{Nodes: nodeSet(nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetStats().GetTotalNodes() != 5 ||
		r.GetStats().GetSuccessfulNodes() != 1 || r.GetStats().GetFailedNodes() != 4 ||
		r.GetMessage() != "Power state query completed with 1 successes and 4 failures out of 5 nodes" {
		t.Fatalf("response = %v", r)
	}
	if len(resp.GetNodePowerStates()) != 1 || resp.GetNodePowerStates()[0].GetNodeId() != compute[0].ID {
		t.Fatalf("node_power_states must list only the node that answered: %v", resp.GetNodePowerStates())
	}
	want := []string{"", "http 401", "unreachable", "bmc_endpoint is required", "duplicate target rack_id/node_id"}
	for i, res := range r.GetNodeResults() {
		if res.GetNodeId() != nodes[i].ID {
			t.Errorf("result %d echoes %s, want %s", i, res.GetNodeId(), nodes[i].ID)
		}
		if i == 0 {
			if res.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
				t.Errorf("healthy node failed: %v", res)
			}
			continue
		}
		if res.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || res.GetErrorMessage() == "" ||
			!strings.Contains(strings.ToLower(res.GetErrorMessage()), want[i]) {
			t.Errorf("result %d = %v, want FAILURE mentioning %q", i, res, want[i])
		}
	}
	if strings.Contains(r.String(), "rotated-elsewhere") || strings.Contains(r.String(), "sim-bmc-password") {
		t.Fatal("a password leaked into the response")
	}
}

func TestPowerRequestsAreValidatedBeforeAnythingRuns(t *testing.T) {
	s := startSimRack(t)
	node := s.ofKind(hw.KindCompute)[0]
	bad := rmspb.PowerOperation(99)
	for _, op := range []rmspb.PowerOperation{rmspb.PowerOperation_POWER_OPERATION_UNSPECIFIED, bad} {
		_, err := s.client.BatchSetPowerState(rpcContext(t), &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(node), Operation: op})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("BatchSetPowerState(%v) = %v, want INVALID_ARGUMENT", op, err)
		}
		_, err = s.client.SetPowerState(rpcContext(t), &rmspb.SetPowerStateRequest{RackId: node.RackID, NodeId: node.ID, Operation: op})
		if status.Code(err) != codes.InvalidArgument {
			t.Errorf("SetPowerState(%v) = %v, want INVALID_ARGUMENT", op, err)
		}
	}
	badType := rmspb.NodeType(42)
	info := NodeInfoToProto(node)
	info.Type = &badType
	_, err := s.client.BatchGetPowerState(rpcContext(t), &rmspb.BatchGetPowerStateRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{info}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("invalid node type: %v", err)
	}
	if got := len(s.device(t, node.ID).Resets()); got != 0 {
		t.Fatalf("%d resets reached the BMC from refused requests", got)
	}
}

func TestRegisteredPowerAndTheRackGuard(t *testing.T) {
	s := startSimRack(t)
	node := s.ofKind(hw.KindCompute)[0]
	ctx := rpcContext(t)
	set, err := s.client.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: node.RackID, NodeId: node.ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF})
	if err != nil || set.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("SetPowerState = %v, %v", set, err)
	}
	get, err := s.client.GetPowerState(ctx, &rmspb.GetPowerStateRequest{RackId: node.RackID, NodeId: node.ID})
	if err != nil || get.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || get.GetPstate() != "OFF" ||
		get.GetNodeId() != node.ID || get.GetRackId() != node.RackID {
		t.Fatalf("GetPowerState = %v, %v", get, err)
	}

	unknown, err := s.client.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: node.RackID, NodeId: "no-such-node",
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if err != nil || unknown.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("unknown node = %v, %v", unknown, err)
	}
	unknownRack, err := s.client.GetPowerState(ctx, &rmspb.GetPowerStateRequest{RackId: "no-such-rack", NodeId: node.ID})
	if err != nil || unknownRack.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || unknownRack.GetPstate() != "" ||
		unknownRack.GetRackId() != "no-such-rack" || unknownRack.GetNodeId() != node.ID {
		t.Fatalf("unknown rack = %v, %v (want FAILURE, the ids echoed and pstate empty)", unknownRack, err)
	}

	// The rack's power domain held (a shelf power change, a cold reboot):
	// refused in-band, nothing reaches the BMC.
	rackLease, err := s.engine.Lease(ctx, messages.AcquireLease{ID: "other", Operation: "SetPowerState", Racks: []string{node.RackID}})
	if err != nil || rackLease.Err != nil {
		t.Fatal(err, rackLease.Err)
	}
	before := len(s.device(t, node.ID).Resets())
	busy, err := s.client.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: node.RackID, NodeId: node.ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if err != nil || busy.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("SetPowerState while the rack is held = %v, %v", busy, err)
	}
	if len(s.device(t, node.ID).Resets()) != before {
		t.Fatal("a refused SetPowerState reached the BMC")
	}
	// Reads take no lease.
	if get, err := s.client.GetPowerState(ctx, &rmspb.GetPowerStateRequest{RackId: node.RackID, NodeId: node.ID}); err != nil ||
		get.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("GetPowerState while the rack is held = %v, %v", get, err)
	}
	if err := s.engine.Release(ctx, "other"); err != nil {
		t.Fatal(err)
	}

	// A job on the node (a firmware flash): refused too.
	gate := make(chan struct{})
	job, err := s.engine.Create(ctx, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: node.RackID, NodeID: node.ID},
		messages.WorkflowFunc(func(_ context.Context, r messages.Reporter) { <-gate; _ = r.Complete("Completed", "") }), nil)
	if err != nil {
		t.Fatal(err)
	}
	if busy, err := s.client.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: node.RackID, NodeId: node.ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF}); err != nil || busy.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("SetPowerState on a node a job holds = %v, %v", busy, err)
	}
	if len(s.device(t, node.ID).Resets()) != before {
		t.Fatal("a refused SetPowerState reached the BMC")
	}
	close(gate)
	if err := s.engine.Wait(ctx, job.ID); err != nil {
		t.Fatal(err)
	}
	again, err := s.client.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: node.RackID, NodeId: node.ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if err != nil || again.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("SetPowerState once the node is free = %v, %v", again, err)
	}
	if l, err := s.engine.Actors(ctx); err != nil || l.HeldNodes != 0 {
		t.Fatalf("%d holds left after the power changes (%v)", l.HeldNodes, err)
	}
}

func TestBatchSetPowerStateSkipsNodesAJobHolds(t *testing.T) {
	s := startSimRack(t)
	ctx := rpcContext(t)
	shelves := s.ofKind(hw.KindPowerShelf)
	held := shelves[0]
	gate := make(chan struct{})
	defer close(gate)
	job, err := s.engine.Create(ctx, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: held.RackID, NodeID: held.ID},
		messages.WorkflowFunc(func(_ context.Context, r messages.Reporter) { <-gate; _ = r.Complete("Completed", "") }), nil)
	if err != nil {
		t.Fatal(err)
	}
	before := len(s.device(t, held.ID).Resets())
	resp, err := s.client.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(shelves[:3]...),
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	want := "job already in progress for rack " + held.RackID + " node " + held.ID + " (job_id " + job.ID + ")"
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetStats().GetFailedNodes() != 1 || r.GetStats().GetSuccessfulNodes() != 2 ||
		r.GetMessage() != "Power operation completed with 2 successes and 1 failures out of 3 nodes" ||
		r.GetNodeResults()[0].GetErrorMessage() != want || r.GetNodeResults()[1].GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("BatchSetPowerState with a held shelf = %v", r)
	}
	if len(s.device(t, held.ID).Resets()) != before {
		t.Fatal("the held shelf was switched")
	}
	if l, err := s.engine.Actors(ctx); err != nil || l.HeldNodes != 1 {
		t.Fatalf("%d holds after the batch, want only the job's (%v)", l.HeldNodes, err)
	}
}

// A batch node without a rack_id or node_id fails on its own, naming what
// is missing; it is never contacted and the rest of the batch runs.
func TestBatchPowerNodesWithoutIDsFail(t *testing.T) {
	s := startSimRack(t)
	compute := s.ofKind(hw.KindCompute)
	noNode, noRack, neither := compute[1], compute[2], compute[3]
	noNode.ID = ""
	noRack.RackID = " "
	neither.ID, neither.RackID = "", ""
	nodes := []hw.Node{compute[0], noNode, noRack, neither}
	want := []string{"", "node_id is required", "rack_id is required", "rack_id and node_id are required"}
	check := func(rpc string, r *rmspb.NodeBatchResponse, wantMessage string) {
		t.Helper()
		if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetStats().GetSuccessfulNodes() != 1 ||
			r.GetStats().GetFailedNodes() != 3 || len(r.GetNodeResults()) != 4 || r.GetMessage() != wantMessage {
			t.Fatalf("%s = %v", rpc, r)
		}
		for i, res := range r.GetNodeResults() {
			if res.GetNodeId() != nodes[i].ID || res.GetErrorMessage() != want[i] {
				t.Errorf("%s: result %d = %v, want %q", rpc, i, res, want[i])
			}
		}
	}
	get, err := s.client.BatchGetPowerState(rpcContext(t), &rmspb.BatchGetPowerStateRequest{Nodes: nodeSet(nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	check("BatchGetPowerState", get.GetResponse(), "Power state query completed with 1 successes and 3 failures out of 4 nodes")
	if len(get.GetNodePowerStates()) != 1 || get.GetNodePowerStates()[0].GetNodeId() != compute[0].ID {
		t.Fatalf("node_power_states = %v", get.GetNodePowerStates())
	}
	set, err := s.client.BatchSetPowerState(rpcContext(t), &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(nodes...),
		Operation: rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF})
	if err != nil {
		t.Fatal(err)
	}
	check("BatchSetPowerState", set.GetResponse(), "Power operation completed with 1 successes and 3 failures out of 4 nodes")
	for _, n := range compute[1:4] {
		if resets := s.device(t, n.ID).Resets(); len(resets) != 0 {
			t.Errorf("%s was reset (%v) through a node without an id", n.ID, resets)
		}
	}
	if got := s.device(t, compute[0].ID).Resets(); len(got) != 1 {
		t.Errorf("the node with ids was reset %d times, want once", len(got))
	}
}

// The simulator's BMCs, like real ones, repeat their 401 sentence in
// @Message.ExtendedInfo: the node's error says it once.
func TestBatchGetPowerStateWrongCredentialsSaysItOnce(t *testing.T) {
	s := startSimRack(t)
	node := s.ofKind(hw.KindCompute)[4]
	s.device(t, node.ID).SetCredentials("admin", "rotated-elsewhere")
	resp, err := s.client.BatchGetPowerState(rpcContext(t), &rmspb.BatchGetPowerStateRequest{Nodes: nodeSet(node)})
	if err != nil {
		t.Fatal(err)
	}
	const sentence = "There are insufficient privileges for the account or credentials associated with the current session to perform the requested operation."
	msg := resp.GetResponse().GetNodeResults()[0].GetErrorMessage()
	if n := strings.Count(msg, sentence); n != 1 || !strings.Contains(msg, "HTTP 401") {
		t.Fatalf("the 401 sentence appears %d times in %q", n, msg)
	}
}
