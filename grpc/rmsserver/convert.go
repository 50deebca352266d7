package rmsserver

import (
	"fmt"
	"sort"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// nodeFromProto normalises a caller's NodeInfo: its node type comes from a
// non-UNSPECIFIED type, else from its descriptor. A type that is not a value
// of the enum, or a descriptor that names no supported type, is a gRPC
// INVALID_ARGUMENT: the request is refused before anything starts.
func nodeFromProto(ni *rmspb.NodeInfo) (hw.Node, error) {
	n := hw.Node{ID: ni.GetNodeId(), RackID: ni.GetRackId()}
	attrs := ni.GetNodeDescriptor().GetAttributes()
	switch {
	case ni.Type != nil && ni.GetType() != rmspb.NodeType_NODE_TYPE_UNSPECIFIED:
		t := hw.NodeType(ni.GetType())
		if !t.Valid() || t.Wire() != t {
			return hw.Node{}, status.Errorf(codes.InvalidArgument, "node %s: invalid node type %d", ni.GetNodeId(), int32(ni.GetType()))
		}
		n.Type = t
	case ni.GetNodeDescriptor() != nil:
		t, err := hw.ResolveDescriptor(attrs)
		if err != nil {
			return hw.Node{}, status.Errorf(codes.InvalidArgument, "node %s: %v", ni.GetNodeId(), err)
		}
		n.Type = t
	default:
		return hw.Node{}, status.Errorf(codes.InvalidArgument, "node %s: set type or node_descriptor (role, vendor, product_family)", ni.GetNodeId())
	}
	if p, ok := attrs[hw.AttrInventoryProfile]; ok {
		n.InventoryProfile, n.HasInventoryProfile = strings.TrimSpace(p), true
	}
	if ni.BmcEndpoint != nil {
		ep := endpointFromProto(ni.GetBmcEndpoint())
		n.BMC = &ep
	}
	if ni.HostEndpoint != nil {
		ep := endpointFromProto(ni.GetHostEndpoint())
		n.Host = &ep
	}
	for _, e := range ni.GetAdditionalHostEndpoints() {
		n.AdditionalHosts = append(n.AdditionalHosts, endpointFromProto(e))
	}
	return n, nil
}

// nodesFromProto normalises every node of a set; the first invalid node
// refuses the whole request.
func nodesFromProto(set *rmspb.NodeSet) ([]hw.Node, error) {
	nodes := make([]hw.Node, 0, len(set.GetNodes()))
	for _, ni := range set.GetNodes() {
		n, err := nodeFromProto(ni)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

func endpointFromProto(e *rmspb.Endpoint) hw.Endpoint {
	ep := hw.Endpoint{
		IP:       strings.TrimSpace(e.GetInterface().GetIpAddress()),
		MAC:      strings.TrimSpace(e.GetInterface().GetMacAddress()),
		HostName: strings.TrimSpace(e.GetInterface().GetHostName()),
		Port:     int(e.GetPort()),
	}
	switch c := e.GetCredentials().GetAuth().(type) {
	case *rmspb.Credentials_UserPass:
		ep.Credentials = hw.UserPass(c.UserPass.GetUsername(), c.UserPass.GetPassword())
	case *rmspb.Credentials_SessionToken:
		ep.Credentials = hw.SessionToken(c.SessionToken)
	}
	return ep
}

// EndpointToProto converts an endpoint for the wire, credentials included.
// Only the simulator's inventory file and callers that must hand secrets
// back out use it with credentials; inventory listings strip them first.
func EndpointToProto(ep hw.Endpoint) *rmspb.Endpoint {
	out := &rmspb.Endpoint{
		Interface: &rmspb.NetworkInterface{IpAddress: ep.IP, MacAddress: ep.MAC},
		Port:      uint32(ep.Port),
	}
	if ep.HostName != "" {
		out.Interface.HostName = &ep.HostName
	}
	switch {
	case !ep.Credentials.Token.IsZero():
		out.Credentials = &rmspb.Credentials{Auth: &rmspb.Credentials_SessionToken{SessionToken: ep.Credentials.Token.Reveal()}}
	case !ep.Credentials.IsZero():
		out.Credentials = &rmspb.Credentials{Auth: &rmspb.Credentials_UserPass{UserPass: &rmspb.UsernamePassword{
			Username: ep.Credentials.Username, Password: ep.Credentials.Password.Reveal(),
		}}}
	}
	return out
}

// NodeInfoToProto converts a node for the wire with its credentials: the
// form callers send in requests.
func NodeInfoToProto(n hw.Node) *rmspb.NodeInfo {
	out := &rmspb.NodeInfo{NodeId: n.ID, RackId: n.RackID}
	if w := n.Type.Wire(); w != hw.NodeTypeUnspecified {
		t := rmspb.NodeType(w)
		out.Type = &t
	}
	out.NodeDescriptor = &rmspb.NodeDescriptor{Attributes: n.Type.Descriptor()}
	if n.HasInventoryProfile {
		out.NodeDescriptor.Attributes[hw.AttrInventoryProfile] = n.InventoryProfile
	}
	if n.BMC != nil {
		out.BmcEndpoint = EndpointToProto(*n.BMC)
	}
	if n.Host != nil {
		out.HostEndpoint = EndpointToProto(*n.Host)
	}
	for _, e := range n.AdditionalHosts {
		out.AdditionalHostEndpoints = append(out.AdditionalHostEndpoints, EndpointToProto(e))
	}
	return out
}

// nodeResult is the outcome of one node of a batch.
type nodeResult struct {
	nodeID string
	err    error
}

// batchResponse builds a NodeBatchResponse: SUCCESS only when no node
// failed, one result per node echoing the caller's node_id, and the stats.
// The message summarises the failures.
func batchResponse(results []nodeResult) *rmspb.NodeBatchResponse {
	resp := &rmspb.NodeBatchResponse{Stats: &rmspb.NodeOperationStats{TotalNodes: uint32(len(results))}}
	var failures []string
	for _, r := range results {
		nr := &rmspb.NodeOperationResult{NodeId: r.nodeID, Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS}
		if r.err != nil {
			nr.Status = rmspb.ReturnCode_RETURN_CODE_FAILURE
			nr.ErrorMessage = r.err.Error()
			failures = append(failures, fmt.Sprintf("%s: %s", r.nodeID, r.err))
			resp.Stats.FailedNodes++
		} else {
			resp.Stats.SuccessfulNodes++
		}
		resp.NodeResults = append(resp.NodeResults, nr)
	}
	resp.Status = rmspb.ReturnCode_RETURN_CODE_SUCCESS
	resp.Message = fmt.Sprintf("%d of %d nodes succeeded", resp.Stats.SuccessfulNodes, resp.Stats.TotalNodes)
	if len(failures) > 0 {
		resp.Status = rmspb.ReturnCode_RETURN_CODE_FAILURE
		sort.Strings(failures)
		resp.Message = fmt.Sprintf("%d of %d nodes failed: %s", resp.Stats.FailedNodes, resp.Stats.TotalNodes, strings.Join(failures, "; "))
	}
	return resp
}

// noNodesMessage answers every batch RPC called with no node at all.
const noNodesMessage = "No nodes specified in request"

// noNodesResponse is the NodeBatchResponse of a batch RPC with no node:
// FAILURE, with zero stats.
func noNodesResponse() *rmspb.NodeBatchResponse {
	return &rmspb.NodeBatchResponse{
		Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, Message: noNodesMessage, Stats: &rmspb.NodeOperationStats{},
	}
}
