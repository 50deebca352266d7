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
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetStats().GetSuccessfulNodes() != 35 || len(resp.GetNodePowerStates()) != 35 {
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
		if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
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
		r.GetStats().GetSuccessfulNodes() != 1 || r.GetStats().GetFailedNodes() != 4 {
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
	if err != nil || unknownRack.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || unknownRack.GetPstate() != "UNKNOWN" {
		t.Fatalf("unknown rack = %v, %v", unknownRack, err)
	}

	// A rack-wide lease (another registered power change, a deletion):
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

func TestBatchPowerRPCsWithNoNodes(t *testing.T) {
	s := startSimRack(t)
	ctx := rpcContext(t)
	set, err := s.client.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{})
	if err != nil {
		t.Fatalf("an empty list is answered in-band even before the operation is checked: %v", err)
	}
	get, err := s.client.BatchGetPowerState(ctx, &rmspb.BatchGetPowerStateRequest{Nodes: &rmspb.NodeSet{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*rmspb.NodeBatchResponse{set.GetResponse(), get.GetResponse()} {
		st := r.GetStats()
		if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetMessage() != "No nodes specified in request" ||
			st.GetTotalNodes() != 0 || st.GetSuccessfulNodes() != 0 || st.GetFailedNodes() != 0 || len(r.GetNodeResults()) != 0 {
			t.Fatalf("empty batch = %v", r)
		}
	}
}
