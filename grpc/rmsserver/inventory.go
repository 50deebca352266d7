package rmsserver

import (
	"context"
	"fmt"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// operation builds an OperationResponse: SUCCESS with message, or FAILURE
// with the error's text. The status is always set explicitly.
func operation(err error, okMessage string) *rmspb.OperationResponse {
	if err != nil {
		return &rmspb.OperationResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, Message: err.Error()}
	}
	return &rmspb.OperationResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, Message: okMessage}
}

// CreateNodes registers nodes for the server's lifetime. It succeeds only if
// every node was registered (re-adding a node with the same settings
// counts); the message has one line per node that was not, `{node_id}:
// {reason}` (the first few), then `{n} added, {m} failed`, as upstream. A
// node the store did not take answers UNAVAILABLE instead (nodestore.go).
func (m *rackManager) CreateNodes(_ context.Context, req *rmspb.CreateNodesRequest) (*rmspb.CreateNodesResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.CreateNodesResponse{
			Response: &rmspb.OperationResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, Message: noNodesMessage},
			Stats:    &rmspb.NodeOperationStats{},
		}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Racks == nil {
		return nil, errUnavailable("node registry")
	}
	stats := &rmspb.NodeOperationStats{TotalNodes: uint32(len(nodes))}
	var failures []string
	errs := m.deps.Racks.Create(nodes)
	for i, err := range errs {
		if err != nil {
			stats.FailedNodes++
			failures = append(failures, fmt.Sprintf("%s: %v", nodes[i].ID, err))
		} else {
			stats.SuccessfulNodes++
		}
	}
	if err := createNodesStatus(stats.SuccessfulNodes, failures, errs); err != nil {
		return nil, err
	}
	resp := &rmspb.OperationResponse{
		Status:  rmspb.ReturnCode_RETURN_CODE_SUCCESS,
		Message: fmt.Sprintf("%d added, %d failed", stats.SuccessfulNodes, stats.FailedNodes),
	}
	if len(failures) > 0 {
		resp.Status, resp.Message = rmspb.ReturnCode_RETURN_CODE_FAILURE, summarise(failures, "\n")+"\n"+resp.Message
	}
	return &rmspb.CreateNodesResponse{Response: resp, Stats: stats}, nil
}

// UpdateNode replaces the BMC and/or host endpoint of a registered node.
// (Upstream RMS always refuses this call; rmsd implements it.) The node is
// leased from the job engine with its devices, old and new, for the
// update: a node a job holds (a flash in progress) never has its device
// swapped under it, and the refusal names the holder. Other nodes of the
// rack are updated as usual meanwhile.
func (m *rackManager) UpdateNode(ctx context.Context, req *rmspb.UpdateNodeRequest) (*rmspb.UpdateNodeResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("node registry")
	}
	var bmc, host *hw.Endpoint
	if e := req.GetUpdateInfo().GetBmcEndpoint(); e != nil {
		ep := endpointFromProto(e)
		bmc = &ep
	}
	if e := req.GetUpdateInfo().GetHostEndpoint(); e != nil {
		ep := endpointFromProto(e)
		host = &ep
	}
	if bmc == nil && host == nil { // refused by the registry, nothing to hold
		err := m.deps.Racks.Update(req.GetRackId(), req.GetNodeId(), bmc, host)
		return &rmspb.UpdateNodeResponse{Response: operation(err, "")}, nil
	}
	n, err := m.deps.Racks.Node(req.GetRackId(), req.GetNodeId())
	if err != nil {
		return &rmspb.UpdateNodeResponse{Response: operation(err, "")}, nil
	}
	ref := nodeRefs(ctx, []hw.Node{n})[0]
	ref.Devices = append(ref.Devices, devicesOf(ctx, hw.Node{BMC: bmc, Host: host})...)
	l, err := m.leaseWith(ctx, messages.AcquireLease{Operation: "UpdateNode", Nodes: []messages.NodeRef{ref}}, nil, nil)
	if err != nil {
		return nil, err
	}
	defer l.release()
	if l.err != nil {
		return &rmspb.UpdateNodeResponse{Response: operation(l.err, "")}, nil
	}
	err = m.deps.Racks.Update(req.GetRackId(), req.GetNodeId(), bmc, host)
	if st := nodeChangeStatus(err); st != nil {
		return nil, st
	}
	return &rmspb.UpdateNodeResponse{Response: operation(err, "node "+req.GetNodeId()+" updated")}, nil
}

// DeleteNode removes a registered node. It leases the node from the job
// engine for the deletion: it is refused while a job holds the node or
// the rack's power domain is held (a shelf power change, a cold reboot).
// The rack stays listed when its last node goes, as upstream.
func (m *rackManager) DeleteNode(ctx context.Context, req *rmspb.DeleteNodeRequest) (*rmspb.DeleteNodeResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("node registry")
	}
	n, err := m.deps.Racks.Node(req.GetRackId(), req.GetNodeId())
	if err != nil {
		return &rmspb.DeleteNodeResponse{Response: operation(err, "")}, nil
	}
	l, err := m.leaseWith(ctx, messages.AcquireLease{Operation: "DeleteNode", RacksFree: []string{n.RackID}}, []hw.Node{n}, nil)
	if err != nil {
		return nil, err
	}
	defer l.release()
	if l.err != nil {
		return &rmspb.DeleteNodeResponse{Response: operation(l.err, "")}, nil
	}
	err = m.deps.Racks.Delete(n.RackID, n.ID)
	if st := nodeChangeStatus(err); st != nil {
		return nil, st
	}
	return &rmspb.DeleteNodeResponse{Response: operation(err, "node "+n.ID+" removed")}, nil
}

// ListRacks answers the ids of the registered racks; as upstream, a rack
// stays listed when its last node is deleted.
func (m *rackManager) ListRacks(context.Context, *rmspb.ListRacksRequest) (*rmspb.ListRacksResponse, error) {
	if m.deps.Racks == nil {
		return nil, errUnavailable("node registry")
	}
	return &rmspb.ListRacksResponse{RackIds: m.deps.Racks.Racks()}, nil
}

// ListNodeInventory lists every registered node of every rack, without
// credentials. The descriptor echoes the node's canonical identity and its
// inventory profile.
func (m *rackManager) ListNodeInventory(context.Context, *rmspb.ListNodeInventoryRequest) (*rmspb.ListNodeInventoryResponse, error) {
	if m.deps.Racks == nil {
		return nil, errUnavailable("node registry")
	}
	resp := &rmspb.ListNodeInventoryResponse{}
	for _, n := range m.deps.Racks.Nodes() {
		info := &rmspb.NodeInventoryInfo{
			NodeId:  n.ID,
			RackId:  n.RackID,
			Product: n.Type.Name(),
			Health:  "Unknown",
			Type:    rmspb.NodeType(n.Type.Wire()),
		}
		desc := n.Type.Descriptor()
		if n.HasInventoryProfile {
			desc[hw.AttrInventoryProfile] = n.InventoryProfile
		}
		info.NodeDescriptor = &rmspb.NodeDescriptor{Attributes: desc}
		if n.BMC != nil {
			info.IpAddress, info.MacAddress, info.Port = n.BMC.Host(), n.BMC.MAC, uint32(n.BMC.Port)
		}
		hosts := n.AdditionalHosts
		if n.Host != nil {
			hosts = append([]hw.Endpoint{*n.Host}, hosts...)
		}
		for _, h := range hosts {
			if h.Host() != "" {
				info.HostIpAddresses = append(info.HostIpAddresses, h.Host())
			}
			if h.MAC != "" {
				info.HostMacAddresses = append(info.HostMacAddresses, h.MAC)
			}
		}
		resp.Nodes = append(resp.Nodes, info)
	}
	return resp, nil
}
