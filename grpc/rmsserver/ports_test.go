package rmsserver

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// A caller-supplied node whose endpoint port is above 65535 is refused
// with INVALID_ARGUMENT naming node and endpoint, by a request that acts
// on its own nodes (BatchGetPowerState) as by CreateNodes; nothing is
// registered and no BMC is asked.
func TestOutOfRangePortsAreInvalidArgument(t *testing.T) {
	s := startSimRack(t)
	compute := s.ofKind(hw.KindCompute)
	for _, tc := range []struct {
		set   func(ni *rmspb.NodeInfo)
		field string
	}{
		{func(ni *rmspb.NodeInfo) { ni.BmcEndpoint.Port = 4294967295 }, "nodes[1].bmc_endpoint.port is 4294967295"},
		{func(ni *rmspb.NodeInfo) { ni.BmcEndpoint.Port = 65536 }, "nodes[1].bmc_endpoint.port is 65536"},
		{func(ni *rmspb.NodeInfo) {
			ni.AdditionalHostEndpoints = []*rmspb.Endpoint{{Interface: &rmspb.NetworkInterface{IpAddress: "10.0.0.1"}, Port: 70000}}
		}, "nodes[1].additional_host_endpoints[0].port is 70000"},
	} {
		set := nodeSet(compute[:2]...)
		tc.set(set.Nodes[1])
		want := tc.field + "; a TCP port is 1-65535 (0 for the default)"
		_, err := s.client.BatchGetPowerState(rpcContext(t), &rmspb.BatchGetPowerStateRequest{Nodes: set})
		if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || st.Message() != want {
			t.Errorf("BatchGetPowerState: %v, want INVALID_ARGUMENT %q", err, want)
		}
		set.Nodes[1].NodeId = "fresh-node"
		_, err = s.client.CreateNodes(rpcContext(t), &rmspb.CreateNodesRequest{Nodes: set})
		if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || st.Message() != want {
			t.Errorf("CreateNodes: %v, want INVALID_ARGUMENT %q", err, want)
		}
	}
	if got := len(s.racks.Nodes()); got != len(s.nodes) {
		t.Fatalf("the registry changed: %d nodes, want %d", got, len(s.nodes))
	}
}
