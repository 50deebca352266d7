package rmsserver

import (
	"fmt"
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
	case ni.GetType() != rmspb.NodeType_NODE_TYPE_UNSPECIFIED:
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
	if e := ni.GetBmcEndpoint(); e != nil {
		ep := endpointFromProto(e)
		n.BMC = &ep
	}
	if e := ni.GetHostEndpoint(); e != nil {
		ep := endpointFromProto(e)
		n.Host = &ep
	}
	for _, e := range ni.GetAdditionalHostEndpoints() {
		n.AdditionalHosts = append(n.AdditionalHosts, endpointFromProto(e))
	}
	return n, nil
}

// convertNodes normalises every node of a set; the first invalid node
// (an id checkIDs refuses, a port over 65535, an invalid type or
// descriptor) refuses the whole request. Handlers call it through
// Deps.nodesFromProto, which bounds the set's size first.
func convertNodes(set *rmspb.NodeSet) ([]hw.Node, error) {
	if err := checkNodeSetIDs(set); err != nil {
		return nil, err
	}
	if err := checkNodeSetPorts(set); err != nil {
		return nil, err
	}
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
	creds := e.GetCredentials()
	switch creds.GetAuth().(type) {
	case *rmspb.Credentials_UserPass:
		ep.Credentials = hw.UserPass(creds.GetUserPass().GetUsername(), creds.GetUserPass().GetPassword())
	case *rmspb.Credentials_SessionToken:
		ep.Credentials = hw.SessionToken(creds.GetSessionToken())
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

// batchMessage words the message of a batch reply from its results and
// stats; each RPC has its own (upstream's) wording.
type batchMessage func(results []nodeResult, stats *rmspb.NodeOperationStats) string

// batchResponse builds a NodeBatchResponse: SUCCESS only when no node
// failed, one result per node echoing the caller's node_id (with its error,
// bounded), the stats, and the message message words.
func batchResponse(results []nodeResult, message batchMessage) *rmspb.NodeBatchResponse {
	resp := &rmspb.NodeBatchResponse{
		Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, Stats: &rmspb.NodeOperationStats{TotalNodes: uint32(len(results))},
		NodeResults: make([]*rmspb.NodeOperationResult, 0, len(results)),
	}
	for _, r := range results {
		nr := &rmspb.NodeOperationResult{NodeId: r.nodeID, Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS}
		if r.err != nil {
			nr.Status = rmspb.ReturnCode_RETURN_CODE_FAILURE
			nr.ErrorMessage = clip(r.err.Error(), maxNodeError)
			resp.Status = rmspb.ReturnCode_RETURN_CODE_FAILURE
			resp.Stats.FailedNodes++
		} else {
			resp.Stats.SuccessfulNodes++
		}
		resp.NodeResults = append(resp.NodeResults, nr)
	}
	resp.Message = message(results, resp.Stats)
	return resp
}

// failureList lists the failed nodes of results as format(node_id, error)
// entries, in request order.
func failureList(results []nodeResult, format string) []string {
	var out []string
	for _, r := range results {
		if r.err != nil {
			out = append(out, fmt.Sprintf(format, r.nodeID, r.err))
		}
	}
	return out
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
