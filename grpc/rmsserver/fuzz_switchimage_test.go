package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// The switch image RPCs are fuzzed through gRPC against the fixture's
// rack, firmware_dir and catalog. Each call is wrapped: its reply must
// echo one result per requested node, in order, with a jobs[] entry only
// for a node that succeeded; a parent it started must end (every node is
// at the refusing sink, so inspect_state fails at once) before the next
// input runs.
func init() {
	fuzzFamilies = append(fuzzFamilies, fuzzFamily{target: "FuzzSwitchImage", rpcs: []fuzzRPC{
		checkedImageRPC(rpc(rmspb.RackManager_UpdateSwitchSystemImage_FullMethodName, &rmspb.UpdateSwitchSystemImageRequest{},
			rmspb.RackManagerClient.UpdateSwitchSystemImage, (*rackManager).UpdateSwitchSystemImage)),
		checkedImageRPC(rpc(rmspb.RackManager_ApplyStoredSwitchSystemImage_FullMethodName, &rmspb.ApplyStoredSwitchSystemImageRequest{},
			rmspb.RackManagerClient.ApplyStoredSwitchSystemImage, (*rackManager).ApplyStoredSwitchSystemImage)),
		checkedImageRPC(rpc(rmspb.RackManager_ApplySwitchSystemImage_FullMethodName, &rmspb.ApplySwitchSystemImageRequest{},
			rmspb.RackManagerClient.ApplySwitchSystemImage, (*rackManager).ApplySwitchSystemImage)),
	}})
}

func FuzzSwitchImage(f *testing.F) {
	rack := fuzzRackNodes(0)
	for _, s := range []struct {
		pick uint8
		req  proto.Message
	}{
		{0, &rmspb.UpdateSwitchSystemImageRequest{Nodes: nodeSet(rack[18], rack[0]), LocalFilePath: fuzzPackages[1], ImageFilename: "nvos-1.2.3.bin"}},
		{0, &rmspb.UpdateSwitchSystemImageRequest{Nodes: nodeSet(rack[19]), LocalFilePath: "../etc/passwd"}},
		{1, &rmspb.ApplyStoredSwitchSystemImageRequest{RackId: "rack-001", ObjectId: fuzzObjects.ready, Nodes: nodeSet(rack[18], rack[20])}},
		{1, &rmspb.ApplyStoredSwitchSystemImageRequest{HardwareType: "gb200-nvl", SoftwareType: "dev", Nodes: nodeSet(rack[18])}},
		{2, &rmspb.ApplySwitchSystemImageRequest{RackId: "rack-001", ConfigJson: smallManifest, Nodes: nodeSet(rack[18])}},
	} {
		data, err := proto.Marshal(s.req)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(s.pick, data)
	}
	fuzzTarget(f, "FuzzSwitchImage")
}

// imageReply is what the three switch image replies share.
type imageReply interface {
	GetResponse() *rmspb.NodeBatchResponse
	GetJobs() []*rmspb.SwitchSystemImageUpdateJobInfo
}

// errImageProperty marks a reply that breaks a switch image property.
var errImageProperty = errors.New("switch image reply property")

// checkedImageRPC wraps r's call with the switch image properties and the
// wait for the parent it started.
func checkedImageRPC(r fuzzRPC) fuzzRPC {
	call := r.call
	r.call = func(ctx context.Context, to fuzzCallee, req proto.Message) (proto.Message, error) {
		reply, err := call(ctx, to, req)
		if err != nil {
			return reply, err
		}
		b, ok := reply.(imageReply)
		if !ok {
			return reply, fmt.Errorf("%w: reply %T", errImageProperty, reply)
		}
		// A plain error is reported by fuzzTarget as "not a gRPC status",
		// with the input.
		if p := imageReplyProblem(req, b); p != "" {
			return nil, fmt.Errorf("%w: %s", errImageProperty, p)
		}
		if id := b.GetResponse().GetJobId(); id != "" && to.client != nil {
			if err := waitImageParent(ctx, to.client, id); err != nil {
				return nil, err
			}
		}
		return reply, nil
	}
	return r
}

// imageReplyProblem checks one result per requested node, in order, and
// one job per successful node, each echoing it.
func imageReplyProblem(req proto.Message, b imageReply) string {
	type withNodes interface{ GetNodes() *rmspb.NodeSet }
	results := b.GetResponse().GetNodeResults()
	nodes := req.(withNodes).GetNodes().GetNodes()
	if len(nodes) == 0 {
		return ""
	}
	if len(results) != len(nodes) {
		return fmt.Sprintf("%d node results for %d nodes", len(results), len(nodes))
	}
	next := 0
	for i, j := range b.GetJobs() {
		if j.GetJobId() == "" || j.GetJobId() == b.GetResponse().GetJobId() {
			return fmt.Sprintf("job %d has job_id %q", i, clip(j.GetJobId(), 100))
		}
		for next < len(results) && (results[next].GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || results[next].GetNodeId() != j.GetNodeId()) {
			next++
		}
		if next == len(results) {
			return fmt.Sprintf("job %d is of node %q, which has no successful result after the previous job's", i, clip(j.GetNodeId(), 100))
		}
		next++
	}
	for i, n := range nodes {
		if results[i].GetNodeId() != n.GetNodeId() {
			return fmt.Sprintf("node result %d is of node %q, the request's node %d is %q", i, clip(results[i].GetNodeId(), 100), i, clip(n.GetNodeId(), 100))
		}
	}
	return ""
}

// waitImageParent polls a parent until it is terminal, within ctx.
func waitImageParent(ctx context.Context, c rmspb.RackManagerClient, id string) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		st, err := c.GetSwitchSystemImageJobStatus(ctx, &rmspb.GetSwitchSystemImageJobStatusRequest{JobId: id})
		switch {
		case err != nil:
			return fmt.Errorf("%w: status of job %s: %v", errImageProperty, id, err)
		case st.GetState() == "completed" || st.GetState() == "failed":
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: switch image job %s did not end: %v", errImageProperty, id, ctx.Err())
		case <-t.C:
		}
	}
}

// switchImageReplyProblem is replyProblem for the switch image replies:
// a consistent batch response and bounded echoes; ok is false for any
// other reply.
func switchImageReplyProblem(reply proto.Message) (string, bool) {
	b, ok := reply.(imageReply)
	if !ok {
		return "", false
	}
	type echoes interface {
		GetObjectId() string
		GetImageFilename() string
	}
	p := batchProblem(b.GetResponse())
	if e, ok := reply.(echoes); ok {
		p = firstProblem(p, echoedProblem("object_id", e.GetObjectId()), echoedProblem("image_filename", e.GetImageFilename()))
	}
	return p, true
}
