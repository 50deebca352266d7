package rmsserver

import (
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// maxPort is the highest TCP port. An endpoint's port 0 means the
// protocol's default port (proto3 cannot tell it from unset).
const maxPort = 65535

// namedEndpoint is one endpoint of a node and its field name.
type namedEndpoint struct {
	name string
	ep   *rmspb.Endpoint
}

// checkNodeSetPorts refuses the request if any endpoint of any node has a
// port above maxPort, naming the node by position and the endpoint: the
// same rule CreateNodes applies to what it registers, for every request
// that carries its own nodes.
func checkNodeSetPorts(set *rmspb.NodeSet) error {
	for i, ni := range set.GetNodes() {
		eps := []namedEndpoint{{"bmc_endpoint", ni.GetBmcEndpoint()}, {"host_endpoint", ni.GetHostEndpoint()}}
		for j, e := range ni.GetAdditionalHostEndpoints() {
			eps = append(eps, namedEndpoint{fmt.Sprintf("additional_host_endpoints[%d]", j), e})
		}
		for _, e := range eps {
			if p := e.ep.GetPort(); p > maxPort {
				return status.Errorf(codes.InvalidArgument, "nodes[%d].%s.port is %d; a TCP port is 1-%d (0 for the default)", i, e.name, p, maxPort)
			}
		}
	}
	return nil
}
