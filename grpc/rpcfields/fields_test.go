package rpcfields_test

import (
	"context"
	"slices"
	"testing"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rpcfields"
)

func TestTargetsOfSingleAndBatchRequests(t *testing.T) {
	creds := &rmspb.Credentials{Auth: &rmspb.Credentials_UserPass{UserPass: &rmspb.UsernamePassword{Username: "u", Password: "p"}}}
	batch := &rmspb.BatchSetPowerStateRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		{RackId: "rack-1", NodeId: "a", BmcEndpoint: &rmspb.Endpoint{Credentials: creds}},
		{RackId: "rack-1", NodeId: "b"},
		{RackId: "rack-2", NodeId: "a"},
	}}}
	racks, nodes := rpcfields.Targets(batch)
	if !slices.Equal(racks, []string{"rack-1", "rack-2"}) || !slices.Equal(nodes, []string{"a", "b"}) {
		t.Errorf("batch targets %v %v", racks, nodes)
	}
	if r, n := rpcfields.Target(batch); r != "" || n != "" {
		t.Errorf("a batch's single target is %q %q, want none", r, n)
	}
	single := &rmspb.SetPowerStateRequest{RackId: "rack-1", NodeId: "c"}
	racks, nodes = rpcfields.Targets(single)
	if !slices.Equal(racks, []string{"rack-1"}) || !slices.Equal(nodes, []string{"c"}) {
		t.Errorf("single targets %v %v", racks, nodes)
	}
	if racks, nodes := rpcfields.Targets("not a message"); racks != nil || nodes != nil {
		t.Errorf("a non-message names %v %v", racks, nodes)
	}
}

func TestJobIDsAndFailureOfReplies(t *testing.T) {
	reply := &rmspb.ConfigureSwitchCertificateResponse{
		Response: &rmspb.NodeBatchResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, Message: "one refused", JobId: "parent"},
		Jobs:     []*rmspb.ConfigureSwitchCertificateJobInfo{{NodeId: "a", JobId: "child-1"}, {NodeId: "b", JobId: "child-2"}},
	}
	if got := rpcfields.JobIDs(reply); !slices.Equal(got, []string{"parent", "child-1", "child-2"}) {
		t.Errorf("job ids %v", got)
	}
	if msg, failed := rpcfields.Failure(reply); !failed || msg != "one refused" {
		t.Errorf("failure %q %v", msg, failed)
	}
	if _, failed := rpcfields.Failure(&rmspb.SetPowerStateResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS}); failed {
		t.Error("a SUCCESS reply reads as a failure")
	}
}

func TestReasonTravelsOutward(t *testing.T) {
	rpcfields.SetReason(context.Background(), "nobody listens") // no Reason: ignored
	ctx, r := rpcfields.WithReason(context.Background())
	rpcfields.SetReason(ctx, "node a: busy")
	if r.Text() != "node a: busy" {
		t.Errorf("reason %q", r.Text())
	}
}

// TestTargetsOfALargeBatchAreEachOnce: past the linear search, the index
// still keeps every id once, in order.
func TestTargetsOfALargeBatchAreEachOnce(t *testing.T) {
	var nodes []*rmspb.NodeInfo
	var want []string
	for i := range 100 {
		id := string(rune('A'+i/26)) + string(rune('a'+i%26))
		want = append(want, id)
		nodes = append(nodes, &rmspb.NodeInfo{RackId: "rack-1", NodeId: id}, &rmspb.NodeInfo{RackId: "rack-1", NodeId: id})
	}
	racks, got := rpcfields.Targets(&rmspb.BatchSetPowerStateRequest{Nodes: &rmspb.NodeSet{Nodes: nodes}})
	if !slices.Equal(got, want) || !slices.Equal(racks, []string{"rack-1"}) {
		t.Errorf("targets %v %v", racks, got)
	}
}
