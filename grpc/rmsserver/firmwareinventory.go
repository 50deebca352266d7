package rmsserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
)

// The firmware inventory RPCs are synchronous reads: no job and no lease,
// so a node a job holds (a flash in progress) can still be read. As
// upstream, a switch is read through NVUE (its host endpoint), compute
// trays and power shelves through their BMC's Redfish firmware inventory.

// firmwareTypeWire maps a component type to upstream's firmware_type
// number.
var firmwareTypeWire = map[platform.FirmwareType]int32{
	platform.FirmwareUnknown: 0,
	platform.FirmwareBMC:     1,
	platform.FirmwareBIOS:    2,
	platform.FirmwareCPLD:    3,
	platform.FirmwareFPGA:    4,
	platform.FirmwareNIC:     5,
	platform.FirmwareHBA:     6,
	platform.FirmwareHMC:     7,
}

// firmwareToProto converts one component. Its target is what an update
// names it by: the Redfish inventory URI, or the NVUE component name of a
// switch.
func firmwareToProto(fw platform.Firmware) *rmspb.FirmwareInventoryInfo {
	target := fw.URI
	if target == "" {
		target = fw.ID
	}
	return &rmspb.FirmwareInventoryInfo{Name: fw.ID, Version: fw.Version, Updateable: fw.Updateable, Target: target,
		Health: fw.Health, FirmwareType: firmwareTypeWire[fw.Type]}
}

// readFirmwareInventory is the node operation behind the firmware inventory
// RPCs; lists receives one list per node index.
func readFirmwareInventory(lists [][]*rmspb.FirmwareInventoryInfo) func(ctx context.Context, i int, d platform.Device) error {
	return func(ctx context.Context, i int, d platform.Device) error {
		inv, err := d.FirmwareInventory(ctx)
		if err != nil {
			return err
		}
		list := make([]*rmspb.FirmwareInventoryInfo, 0, len(inv))
		for _, fw := range inv {
			list = append(list, firmwareToProto(fw))
		}
		lists[i] = list
		return nil
	}
}

// Refusals of a node the firmware inventory cannot be read from, before
// any I/O.
var (
	errNoSwitchHost = errors.New("host_endpoint is required for switch firmware inventory")
	errNoBMCForFW   = errors.New("bmc_endpoint is required for firmware inventory")
)

// requireInventoryEndpoint is the per-node precondition of the firmware
// inventory RPCs: the endpoint the node's inventory is read through.
func requireInventoryEndpoint(n hw.Node) error {
	if !platform.Supports(n.Type, platform.CapFirmwareInventory) {
		return fmt.Errorf("%s nodes have no firmware inventory: %w", n.Type.Name(), hw.ErrUnsupported)
	}
	if n.Type.Kind() == hw.KindSwitch {
		if n.Host == nil || n.Host.Host() == "" {
			return errNoSwitchHost
		}
		return nil
	}
	if n.BMC == nil || n.BMC.Host() == "" {
		return errNoBMCForFW
	}
	return nil
}

// firmwareInventories reads the inventory of every node: one result per
// node, and an entry for each node that succeeded, in request order.
func (m *rackManager) firmwareInventories(ctx context.Context, nodes []hw.Node) ([]*rmspb.NodeFirmwareInventory, []nodeResult) {
	lists := make([][]*rmspb.FirmwareInventoryInfo, len(nodes))
	results := m.eachNode(ctx, nodes, requireInventoryEndpoint, readFirmwareInventory(lists))
	var out []*rmspb.NodeFirmwareInventory
	for i, r := range results {
		if r.err == nil {
			out = append(out, &rmspb.NodeFirmwareInventory{NodeId: nodes[i].ID, FirmwareList: lists[i]})
		}
	}
	return out, results
}

// GetNodeFirmwareInventory reads the installed firmware of a registered
// node. The reply has no message (upstream's shape): an unknown rack or
// node, or a read that failed, is FAILURE with an empty list, and logged;
// a missing rack_id or node_id is INVALID_ARGUMENT, which says which.
func (m *rackManager) GetNodeFirmwareInventory(ctx context.Context, req *rmspb.GetNodeFirmwareInventoryRequest) (*rmspb.GetNodeFirmwareInventoryResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	if err := requireIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil {
		return nil, errUnavailable("firmware inventory")
	}
	fail := &rmspb.GetNodeFirmwareInventoryResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE}
	n, err := m.deps.Racks.Node(req.GetRackId(), req.GetNodeId())
	if err == nil {
		err = requireInventoryEndpoint(n)
	}
	if err != nil {
		m.failed(ctx, req.GetRackId(), req.GetNodeId(), err)
		return fail, nil
	}
	lists := make([][]*rmspb.FirmwareInventoryInfo, 1)
	if err := m.deps.Nodes.One(ctx, n, readFirmwareInventory(lists)); err != nil {
		m.failed(ctx, n.RackID, n.ID, err)
		return fail, nil
	}
	return &rmspb.GetNodeFirmwareInventoryResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, FirmwareList: lists[0]}, nil
}

// BatchGetFirmwareInventory reads the installed firmware of caller-supplied
// nodes, concurrently, without registering them. A partial success keeps
// both: nodes lists every node that answered, node_results every failure.
func (m *rackManager) BatchGetFirmwareInventory(ctx context.Context, req *rmspb.BatchGetFirmwareInventoryRequest) (*rmspb.BatchGetFirmwareInventoryResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.BatchGetFirmwareInventoryResponse{Response: noNodesResponse()}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil {
		return nil, errUnavailable("firmware inventory")
	}
	inv, results := m.firmwareInventories(ctx, nodes)
	return &rmspb.BatchGetFirmwareInventoryResponse{Response: batchResponse(results, firmwareInventoryMessage), Nodes: inv}, nil
}

// GetRackFirmwareInventory reads the installed firmware of every registered
// node of a rack. As upstream, an unknown rack is FAILURE with no nodes, a
// rack without nodes is SUCCESS, and a node that fails makes the reply
// FAILURE while the nodes that answered are still listed; the reply has no
// message, so the failures are logged, and a missing rack_id is
// INVALID_ARGUMENT.
func (m *rackManager) GetRackFirmwareInventory(ctx context.Context, req *rmspb.GetRackFirmwareInventoryRequest) (*rmspb.GetRackFirmwareInventoryResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}); err != nil {
		return nil, err
	}
	if err := requireIDs(idField{"rack_id", req.GetRackId()}); err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil {
		return nil, errUnavailable("firmware inventory")
	}
	nodes, err := m.deps.Racks.RackNodes(req.GetRackId())
	if err != nil {
		m.failed(ctx, req.GetRackId(), "", err)
		return &rmspb.GetRackFirmwareInventoryResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE}, nil
	}
	inv, results := m.firmwareInventories(ctx, nodes)
	resp := &rmspb.GetRackFirmwareInventoryResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, Nodes: inv}
	if failed := failureList(results, "node_id=%s: %v"); len(failed) > 0 {
		resp.Status = rmspb.ReturnCode_RETURN_CODE_FAILURE // each failure is recorded by eachNode
	}
	return resp, nil
}

// firmwareInventoryMessage words a BatchGetFirmwareInventory reply (upstream's
// wording is not known): the counts, then the first failures.
func firmwareInventoryMessage(results []nodeResult, st *rmspb.NodeOperationStats) string {
	msg := fmt.Sprintf("Firmware inventory retrieved for %d/%d nodes", st.GetSuccessfulNodes(), st.GetTotalNodes())
	if st.GetFailedNodes() == 0 {
		return msg
	}
	return msg + "; failed: " + summarise(failureList(results, "node_id=%s: %v"), "; ")
}
