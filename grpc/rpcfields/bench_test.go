package rpcfields_test

import (
	"fmt"
	"testing"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rpcfields"
)

// BenchmarkAuditFieldsOfBatch1000 is what the audit interceptor reads of
// a 1,000-node BatchUpdateFirmware (the southbound harness's admission):
// the request's racks and nodes and the reply's job ids.
func BenchmarkAuditFieldsOfBatch1000(b *testing.B) {
	req := &rmspb.BatchUpdateFirmwareRequest{Nodes: &rmspb.NodeSet{}, ForceUpdate: true}
	reply := &rmspb.BatchUpdateFirmwareResponse{Response: &rmspb.NodeBatchResponse{JobId: "parent", Stats: &rmspb.NodeOperationStats{TotalNodes: 1000}}}
	for i := range 1000 {
		rack := fmt.Sprintf("rack-%d", i/18)
		node := fmt.Sprintf("%s-compute-%d", rack, i%18)
		req.Nodes.Nodes = append(req.Nodes.Nodes, &rmspb.NodeInfo{RackId: rack, NodeId: node, Type: rmspb.NodeType_COMPUTE_GB200_NVIDIA.Enum(),
			BmcEndpoint: &rmspb.Endpoint{Interface: &rmspb.NetworkInterface{IpAddress: fmt.Sprintf("10.0.%d.%d", i>>8, i&255)}, Port: 443,
				Credentials: &rmspb.Credentials{Auth: &rmspb.Credentials_UserPass{UserPass: &rmspb.UsernamePassword{Username: "u", Password: "p"}}}}})
		reply.Response.NodeResults = append(reply.Response.NodeResults, &rmspb.NodeOperationResult{NodeId: node})
		reply.Jobs = append(reply.Jobs, &rmspb.NodeFirmwareJobInfo{NodeId: node, JobId: fmt.Sprintf("job-%d", i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		racks, nodes := rpcfields.Targets(req)
		jobs := rpcfields.JobIDs(reply)
		if len(racks) != 56 || len(nodes) != 1000 || len(jobs) != 1001 {
			b.Fatalf("%d racks, %d nodes, %d jobs", len(racks), len(nodes), len(jobs))
		}
	}
}
