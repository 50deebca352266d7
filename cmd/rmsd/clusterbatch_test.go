package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/test/clustersite"
)

// traysPerRack is how many compute trays of each rack the site tests'
// firmware batch updates: children on every rack, few enough for the
// loaded two-core machine.
const traysPerRack = 3

// publishRelease starts an artifact server for t with the simulator's
// release on it (compute tray packages the simulated trays accept).
func publishRelease(t *testing.T) (*artifactsim.Server, simrelease.Release) {
	t.Helper()
	art, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(art.Close)
	rel, err := simrelease.Publish(art, simrelease.Options{Size: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return art, rel
}

// addRelease adds rel to the site's catalog through c and waits until
// its packages are downloaded; it returns the object's id.
func addRelease(ctx context.Context, t *testing.T, c rmspb.RackManagerClient, rel simrelease.Release) string {
	t.Helper()
	added, err := c.AddFirmwareObject(ctx, &rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	if err != nil {
		t.Fatalf("AddFirmwareObject: %v", err)
	}
	id := added.GetObject().GetId()
	for {
		obj, err := c.GetFirmwareObject(ctx, &rmspb.GetFirmwareObjectRequest{Id: id})
		if err == nil && obj.GetObject().GetAvailable() {
			return id
		}
		if ctx.Err() != nil {
			t.Fatalf("firmware object %s not available: %v, %v", id, obj.GetObject(), err)
		}
		clustersite.Pause(ctx, 100*time.Millisecond)
	}
}

// computeTrays returns traysPerRack compute trays of every rack of s.
func computeTrays(s *clustersite.Site, n int) *rmspb.NodeSet {
	set := &rmspb.NodeSet{}
	for _, rack := range s.RackIDs() {
		taken := 0
		for _, node := range s.Racks[rack] {
			if taken < n && node.GetType() == rmspb.NodeType_COMPUTE_GB200_NVIDIA {
				set.Nodes = append(set.Nodes, node)
				taken++
			}
		}
	}
	return set
}

// applyRelease sends req (an ApplyFirmwareObject or
// ApplyStoredFirmwareObject over several racks) through m, and returns
// the cluster parent's id and each child's rack by child id. Every node
// must have a child.
func applyRelease(ctx context.Context, t *testing.T, m *clustersite.Member, req interface{ GetNodes() *rmspb.NodeSet }) (string, map[string]string) {
	t.Helper()
	var (
		resp *rmspb.NodeBatchResponse
		jobs []*rmspb.NodeFirmwareJobInfo
		err  error
	)
	switch r := req.(type) {
	case *rmspb.ApplyFirmwareObjectRequest:
		var out *rmspb.ApplyFirmwareObjectResponse
		out, err = m.RMS().ApplyFirmwareObject(ctx, r)
		resp, jobs = out.GetResponse(), out.GetJobs()
	case *rmspb.ApplyStoredFirmwareObjectRequest:
		var out *rmspb.ApplyStoredFirmwareObjectResponse
		out, err = m.RMS().ApplyStoredFirmwareObject(ctx, r)
		resp, jobs = out.GetResponse(), out.GetJobs()
	default:
		t.Fatalf("applyRelease: %T", req)
	}
	nodes := req.GetNodes().GetNodes()
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || resp.GetJobId() == "" || len(jobs) != len(nodes) {
		t.Fatalf("batch over %d nodes through %s: %d jobs, %v, %v", len(nodes), m.ID, len(jobs), resp, err)
	}
	rackOf := map[string]string{}
	for _, n := range nodes {
		rackOf[n.GetNodeId()] = n.GetRackId()
	}
	children := map[string]string{}
	for _, j := range jobs {
		children[j.GetJobId()] = rackOf[j.GetNodeId()]
	}
	return resp.GetJobId(), children
}

// batchStates reads a cluster parent with its children through c: the
// parent's status first.
func batchStates(ctx context.Context, c rmspb.RackManagerClient, parent string) ([]*rmspb.JobStatus, error) {
	resp, err := c.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: parent, IncludeChildJobStates: true})
	if err != nil {
		return nil, err
	}
	if len(resp.GetJobStates()) == 0 || resp.GetJobStates()[0].GetJobId() != parent {
		return nil, fmt.Errorf("job %s: states %v", parent, resp.GetJobStates())
	}
	return resp.GetJobStates(), nil
}

// untilBatchEnded reads a cluster parent through m, again while a rack's
// owner is not reachable, until it has ended, failing t if ctx ends
// first; it returns the parent's and its children's states.
func untilBatchEnded(ctx context.Context, t *testing.T, m *clustersite.Member, parent string) []*rmspb.JobStatus {
	t.Helper()
	for {
		states, err := batchStates(ctx, m.RMS(), parent)
		if err == nil && terminalState(states[0].GetExecutionState()) {
			return states
		}
		if ctx.Err() != nil {
			t.Fatalf("batch %s through %s: %v, %v; not ended", parent, m.ID, states, err)
		}
		clustersite.Pause(ctx, 250*time.Millisecond)
	}
}

// checkChildren fails t unless a parent's states (batchStates) list every
// child the batch admitted, and no other, each answering on its own
// through m with the same state.
func checkChildren(t *testing.T, m *clustersite.Member, parent string, states []*rmspb.JobStatus, children map[string]string) {
	t.Helper()
	listed := map[string]bool{}
	for _, id := range states[0].GetChildJobIds() {
		listed[id] = true
	}
	if len(listed) != len(children) || len(states) != len(children)+1 {
		t.Errorf("parent %s through %s lists %d children with %d states, want the %d admitted", parent, m.ID, len(listed), len(states)-1, len(children))
	}
	for _, js := range states[1:] {
		id := js.GetJobId()
		if _, ok := children[id]; !ok || !listed[id] {
			t.Errorf("parent %s through %s: child %s not admitted or not listed", parent, m.ID, id)
			continue
		}
		own, err := jobState(t.Context(), m.RMS(), id)
		if err != nil || own.GetExecutionState() != js.GetExecutionState() || own.GetRackId() != children[id] {
			t.Errorf("child %s through %s on its own: %v, %v; want %v on rack %s", id, m.ID, own, err, js.GetExecutionState(), children[id])
		}
	}
}
