package rmsserver

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// powerOps maps the wire PowerOperation to the platform operation. RESET is
// a power cycle; OFF is each platform's default off (a graceful shutdown on
// compute trays).
var powerOps = map[rmspb.PowerOperation]platform.PowerOp{
	rmspb.PowerOperation_POWER_OPERATION_OFF:               platform.PowerOff,
	rmspb.PowerOperation_POWER_OPERATION_ON:                platform.PowerOn,
	rmspb.PowerOperation_POWER_OPERATION_RESET:             platform.PowerCycle,
	rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF:         platform.PowerForceOff,
	rmspb.PowerOperation_POWER_OPERATION_FORCE_ON:          platform.PowerForceOn,
	rmspb.PowerOperation_POWER_OPERATION_GRACEFUL_SHUTDOWN: platform.PowerGracefulShutdown,
	rmspb.PowerOperation_POWER_OPERATION_GRACEFUL_RESTART:  platform.PowerGracefulRestart,
	rmspb.PowerOperation_POWER_OPERATION_FORCE_RESTART:     platform.PowerForceRestart,
}

// powerOpFromProto validates the requested operation: UNSPECIFIED or a
// value outside the enum is INVALID_ARGUMENT.
func powerOpFromProto(op rmspb.PowerOperation) (platform.PowerOp, error) {
	if op == rmspb.PowerOperation_POWER_OPERATION_UNSPECIFIED {
		return 0, status.Error(codes.InvalidArgument, "operation is required (POWER_OPERATION_UNSPECIFIED given)")
	}
	p, ok := powerOps[op]
	if !ok {
		return 0, status.Errorf(codes.InvalidArgument, "invalid power operation %d", int32(op))
	}
	return p, nil
}

// pstate is the wire spelling of a power state.
func pstate(s platform.PowerState) string {
	switch s {
	case platform.PowerStateOn:
		return "ON"
	case platform.PowerStateOff:
		return "OFF"
	default:
		return "UNKNOWN"
	}
}

// errNoBMC refuses a power operation on a node without a BMC endpoint.
var errNoBMC = errors.New("bmc_endpoint is required for power control")

func setPower(op platform.PowerOp) nodeops.Op {
	return func(ctx context.Context, _ int, d platform.Device) error { return d.SetPower(ctx, op) }
}

// SetPowerState runs one power operation on a registered node. It holds
// the node and its devices (refused while a job holds them: a firmware
// flash is never power-cycled under it) and is refused while the rack's
// power domain is held (a cold reboot, a shelf power change). An operation
// that can cut a power shelf's output holds the domain itself: it is
// refused while any node of the rack is held, naming the holder.
func (m *rackManager) SetPowerState(ctx context.Context, req *rmspb.SetPowerStateRequest) (*rmspb.SetPowerStateResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	op, err := powerOpFromProto(req.GetOperation())
	if err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("power control")
	}
	fail := &rmspb.SetPowerStateResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE}
	n, err := m.deps.Racks.Node(req.GetRackId(), req.GetNodeId())
	if err != nil {
		m.failed(ctx, req.GetRackId(), req.GetNodeId(), err)
		return fail, nil
	}
	l, err := m.leaseWith(ctx, messages.AcquireLease{Operation: "SetPowerState"}, []hw.Node{n}, cutsShelfOutput(op))
	if err != nil {
		return nil, err
	}
	defer l.release()
	if l.err != nil {
		m.failed(ctx, n.RackID, n.ID, l.err)
		return fail, nil
	}
	if err := m.deps.Nodes.One(l.ctx, n, setPower(op)); err != nil {
		m.failed(ctx, n.RackID, n.ID, fmt.Errorf("power %s: %w", op, err))
		return fail, nil
	}
	return &rmspb.SetPowerStateResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS}, nil
}

// GetPowerState reads the power state of a registered node. A failure
// leaves pstate empty, as upstream: UNKNOWN is a state the BMC reported.
func (m *rackManager) GetPowerState(ctx context.Context, req *rmspb.GetPowerStateRequest) (*rmspb.GetPowerStateResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	if err := requireIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil {
		return nil, errUnavailable("power control")
	}
	resp := &rmspb.GetPowerStateResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, NodeId: req.GetNodeId(), RackId: req.GetRackId()}
	n, err := m.deps.Racks.Node(req.GetRackId(), req.GetNodeId())
	if err != nil {
		m.failed(ctx, req.GetRackId(), req.GetNodeId(), err)
		return resp, nil
	}
	var state platform.PowerState
	err = m.deps.Nodes.One(ctx, n, func(ctx context.Context, _ int, d platform.Device) (err error) {
		state, err = d.PowerState(ctx)
		return err
	})
	if err != nil {
		m.failed(ctx, n.RackID, n.ID, err)
		return resp, nil
	}
	resp.Status, resp.Pstate = rmspb.ReturnCode_RETURN_CODE_SUCCESS, pstate(state)
	return resp, nil
}

// BatchSetPowerState applies one operation to every caller-supplied node,
// independently and concurrently. Each node is leased for the operation,
// with its devices, as SetPowerState leases it: a node a job holds (under
// any name), or of a rack whose power domain is held, is that node's
// failure; a shelf whose operation can cut its output takes its rack's
// domain, or fails naming who holds a node of the rack.
func (m *rackManager) BatchSetPowerState(ctx context.Context, req *rmspb.BatchSetPowerStateRequest) (*rmspb.BatchSetPowerStateResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.BatchSetPowerStateResponse{Response: noNodesResponse()}, nil
	}
	op, err := powerOpFromProto(req.GetOperation())
	if err != nil {
		return nil, err
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("power control")
	}
	results, err := m.eachLeasedNode(ctx, "BatchSetPowerState", nodes, requireBMC, cutsShelfOutput(op), setPower(op))
	if err != nil {
		return nil, err
	}
	return &rmspb.BatchSetPowerStateResponse{Response: batchResponse(results, powerSetMessage)}, nil
}

// BatchGetPowerState reads the power state of every caller-supplied node;
// node_power_states lists the nodes that answered.
func (m *rackManager) BatchGetPowerState(ctx context.Context, req *rmspb.BatchGetPowerStateRequest) (*rmspb.BatchGetPowerStateResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.BatchGetPowerStateResponse{Response: noNodesResponse()}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil {
		return nil, errUnavailable("power control")
	}
	states := make([]string, len(nodes))
	results := m.eachNode(ctx, nodes, requireBMC, func(ctx context.Context, i int, d platform.Device) error {
		s, err := d.PowerState(ctx)
		states[i] = pstate(s)
		return err
	})
	resp := &rmspb.BatchGetPowerStateResponse{Response: batchResponse(results, powerGetMessage)}
	resp.NodePowerStates = make([]*rmspb.NodePowerState, 0, resp.GetResponse().GetStats().GetSuccessfulNodes())
	for i, r := range results {
		if r.err == nil {
			resp.NodePowerStates = append(resp.NodePowerStates, &rmspb.NodePowerState{NodeId: nodes[i].ID, Pstate: states[i]})
		}
	}
	return resp, nil
}

// requireBMC is the per-node precondition of the power RPCs.
func requireBMC(n hw.Node) error {
	if n.BMC == nil || n.BMC.Host() == "" {
		return errNoBMC
	}
	return nil
}

// powerSetMessage words a BatchSetPowerState reply as upstream does; the
// reasons are in the node results.
func powerSetMessage(_ []nodeResult, st *rmspb.NodeOperationStats) string {
	if st.GetFailedNodes() == 0 {
		return fmt.Sprintf("Power operation completed for %d/%d nodes", st.GetSuccessfulNodes(), st.GetTotalNodes())
	}
	return fmt.Sprintf("Power operation completed with %d successes and %d failures out of %d nodes",
		st.GetSuccessfulNodes(), st.GetFailedNodes(), st.GetTotalNodes())
}

// powerGetMessage words a BatchGetPowerState reply as upstream does.
func powerGetMessage(_ []nodeResult, st *rmspb.NodeOperationStats) string {
	if st.GetFailedNodes() == 0 {
		return fmt.Sprintf("Power state queried for %d/%d nodes", st.GetSuccessfulNodes(), st.GetTotalNodes())
	}
	return fmt.Sprintf("Power state query completed with %d successes and %d failures out of %d nodes",
		st.GetSuccessfulNodes(), st.GetFailedNodes(), st.GetTotalNodes())
}
