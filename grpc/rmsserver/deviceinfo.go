package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
)

// deviceInfoToProto converts a tray's place in its rack. Placement is
// optional upstream: a value the device did not report as a usable number
// stays unset, never 0 (callers store 0 as a real slot). Slot and tray
// must fit the caller's int32 (NICo refuses larger values); the chassis
// serial must be a non-negative int64.
func deviceInfoToProto(nodeID string, di platform.DeviceInfo) *rmspb.NodeDeviceInfo {
	out := &rmspb.NodeDeviceInfo{NodeId: nodeID, SlotNumber: placement(di.SlotNumber), TrayIndex: placement(di.TrayIndex)}
	if sn, err := strconv.ParseInt(strings.TrimSpace(di.ChassisSerial), 10, 64); err == nil && sn >= 0 {
		out.ChassisSn = &sn
	}
	return out
}

// placement is a slot or tray number for the wire, or nil when the device
// gave none or one outside 0..MaxInt32.
func placement(v *int64) *uint32 {
	if v == nil || *v < 0 || *v > math.MaxInt32 {
		return nil
	}
	u := uint32(*v)
	return &u
}

// readDeviceInfo is the node operation behind the device-info RPCs; infos
// receives one entry per node index.
func readDeviceInfo(nodes []hw.Node, infos []*rmspb.NodeDeviceInfo) func(ctx context.Context, i int, d platform.Device) error {
	return func(ctx context.Context, i int, d platform.Device) error {
		di, err := d.DeviceInfo(ctx)
		if err != nil {
			return err
		}
		infos[i] = deviceInfoToProto(nodes[i].ID, di)
		return nil
	}
}

// noDeviceInfo says why a node type has no device info (its platform lacks
// the capability, as power shelves do: they are not part of the NVLink
// topology), or "" when it has.
func noDeviceInfo(t hw.NodeType) string {
	if !platform.Supports(t, platform.CapDeviceInfo) {
		return fmt.Sprintf("%s nodes have no NVLink tray topology (device info)", t.Name())
	}
	return ""
}

// errNoDeviceInfo marks a batch node whose type has no device info: as
// upstream, it is counted successful, adds no entry and is never contacted
// (so it needs no credentials).
var errNoDeviceInfo = errors.New("rmsserver: node type has no device info")

// deviceInfoRetrieved is the message of a device-info reply without
// failures (upstream's).
const deviceInfoRetrieved = "Device info retrieved successfully"

// GetNodeDeviceInfo reads the tray topology of a registered node. For a
// node type without device info it answers SUCCESS, a message and no info.
func (m *rackManager) GetNodeDeviceInfo(ctx context.Context, req *rmspb.GetNodeDeviceInfoRequest) (*rmspb.GetNodeDeviceInfoResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	fail := func(msg string) (*rmspb.GetNodeDeviceInfoResponse, error) {
		return &rmspb.GetNodeDeviceInfoResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, Message: msg}, nil
	}
	if strings.TrimSpace(req.GetRackId()) == "" || strings.TrimSpace(req.GetNodeId()) == "" {
		return fail("rack_id and node_id are required")
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil {
		return nil, errUnavailable("device info")
	}
	n, err := m.deps.Racks.Node(req.GetRackId(), req.GetNodeId())
	if err != nil {
		return fail(err.Error())
	}
	if why := noDeviceInfo(n.Type); why != "" {
		return &rmspb.GetNodeDeviceInfoResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, Message: why}, nil
	}
	infos := make([]*rmspb.NodeDeviceInfo, 1)
	if err := m.deps.Nodes.One(ctx, n, readDeviceInfo([]hw.Node{n}, infos)); err != nil {
		return fail(clip(err.Error(), maxMessage))
	}
	return &rmspb.GetNodeDeviceInfoResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, Message: deviceInfoRetrieved, DeviceInfo: infos[0]}, nil
}

// ListNodeDeviceInfoByNodeType reads the device info of every registered
// node of one type (node_type, or a node_descriptor) in a rack. A rack
// without such nodes is, as upstream, SUCCESS with zero stats.
func (m *rackManager) ListNodeDeviceInfoByNodeType(ctx context.Context, req *rmspb.ListNodeDeviceInfoByNodeTypeRequest) (*rmspb.ListNodeDeviceInfoByNodeTypeResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}); err != nil {
		return nil, err
	}
	t, err := nodeTypeFromSelector(req.GetNodeType(), req.GetNodeDescriptor())
	if err != nil {
		return nil, err
	}
	fail := func(msg string) (*rmspb.ListNodeDeviceInfoByNodeTypeResponse, error) {
		return &rmspb.ListNodeDeviceInfoByNodeTypeResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, Message: msg,
			Stats: &rmspb.NodeOperationStats{}}, nil
	}
	if strings.TrimSpace(req.GetRackId()) == "" {
		return fail("rack_id is required")
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil {
		return nil, errUnavailable("device info")
	}
	nodes, err := m.deps.Racks.NodesOfType(req.GetRackId(), t)
	if err != nil {
		return fail(err.Error())
	}
	infos, batch := m.deviceInfos(ctx, nodes)
	return &rmspb.ListNodeDeviceInfoByNodeTypeResponse{Status: batch.GetStatus(), Message: batch.GetMessage(), NodeDeviceDetails: infos, Stats: batch.GetStats()}, nil
}

// BatchGetNodeDeviceInfo reads the device info of caller-supplied nodes.
// Node types without device info (power shelves) succeed with no entry.
func (m *rackManager) BatchGetNodeDeviceInfo(ctx context.Context, req *rmspb.BatchGetNodeDeviceInfoRequest) (*rmspb.BatchGetNodeDeviceInfoResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.BatchGetNodeDeviceInfoResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, Message: noNodesMessage,
			Stats: &rmspb.NodeOperationStats{}}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil {
		return nil, errUnavailable("device info")
	}
	infos, batch := m.deviceInfos(ctx, nodes)
	return &rmspb.BatchGetNodeDeviceInfoResponse{Status: batch.GetStatus(), Message: batch.GetMessage(), NodeDeviceDetails: infos, Stats: batch.GetStats()}, nil
}

// deviceInfoMessage words a device-info reply as upstream does: the
// failures as node_id=<id>: <error>, the first few of them.
func deviceInfoMessage(results []nodeResult, st *rmspb.NodeOperationStats) string {
	if st.GetFailedNodes() == 0 {
		return deviceInfoRetrieved
	}
	return "Completed with errors: " + summarise(failureList(results, "node_id=%s: %v"), "; ")
}

// deviceInfos reads the device info of a batch: one entry per node that
// has some, in request order, and the batch outcome.
func (m *rackManager) deviceInfos(ctx context.Context, nodes []hw.Node) ([]*rmspb.NodeDeviceInfo, *rmspb.NodeBatchResponse) {
	infos := make([]*rmspb.NodeDeviceInfo, len(nodes))
	check := func(n hw.Node) error {
		if noDeviceInfo(n.Type) != "" {
			return errNoDeviceInfo
		}
		return nil
	}
	results := m.eachNode(ctx, nodes, check, readDeviceInfo(nodes, infos))
	var out []*rmspb.NodeDeviceInfo
	for i := range results {
		if errors.Is(results[i].err, errNoDeviceInfo) {
			results[i].err = nil // counted successful, no entry
		}
		if results[i].err == nil && infos[i] != nil {
			out = append(out, infos[i])
		}
	}
	return out, batchResponse(results, deviceInfoMessage)
}

// nodeTypeFromSelector resolves a node type given as an enum value or as a
// descriptor; a non-UNSPECIFIED enum value wins.
func nodeTypeFromSelector(t rmspb.NodeType, d *rmspb.NodeDescriptor) (hw.NodeType, error) {
	if t != rmspb.NodeType_NODE_TYPE_UNSPECIFIED {
		nt := hw.NodeType(t)
		if !nt.Valid() || nt.Wire() != nt {
			return 0, status.Errorf(codes.InvalidArgument, "invalid node type %d", int32(t))
		}
		return nt, nil
	}
	if d == nil {
		return 0, status.Error(codes.InvalidArgument, "set node_type or node_descriptor")
	}
	nt, err := hw.ResolveDescriptor(d.GetAttributes())
	if err != nil {
		return 0, status.Error(codes.InvalidArgument, err.Error())
	}
	return nt, nil
}
