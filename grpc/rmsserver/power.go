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

// SetPowerState runs one power operation on a registered node under the
// rack's power guard; a second registered power change on the same rack is
// refused while it runs.
func (m *rackManager) SetPowerState(ctx context.Context, req *rmspb.SetPowerStateRequest) (*rmspb.SetPowerStateResponse, error) {
	op, err := powerOpFromProto(req.GetOperation())
	if err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil {
		return nil, errUnavailable("power control")
	}
	fail := &rmspb.SetPowerStateResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE}
	n, err := m.deps.Racks.Node(req.GetRackId(), req.GetNodeId())
	if err != nil {
		m.log.Info().Str("rack_id", req.GetRackId()).Str("node_id", req.GetNodeId()).Err(err).Msg("SetPowerState refused")
		return fail, nil
	}
	release, err := m.deps.Racks.TryGuard(n.RackID, "SetPowerState on "+n.ID)
	if err != nil {
		m.log.Info().Str("rack_id", n.RackID).Str("node_id", n.ID).Err(err).Msg("SetPowerState refused")
		return fail, nil
	}
	defer release()
	if err := m.deps.Nodes.One(ctx, n, setPower(op)); err != nil {
		m.log.Warn().Str("rack_id", n.RackID).Str("node_id", n.ID).Stringer("operation", op).Err(err).Msg("SetPowerState failed")
		return fail, nil
	}
	return &rmspb.SetPowerStateResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS}, nil
}

// GetPowerState reads the power state of a registered node.
func (m *rackManager) GetPowerState(ctx context.Context, req *rmspb.GetPowerStateRequest) (*rmspb.GetPowerStateResponse, error) {
	if m.deps.Racks == nil || m.deps.Nodes == nil {
		return nil, errUnavailable("power control")
	}
	resp := &rmspb.GetPowerStateResponse{
		Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, NodeId: req.GetNodeId(), RackId: req.GetRackId(), Pstate: pstate(platform.PowerStateUnknown),
	}
	n, err := m.deps.Racks.Node(req.GetRackId(), req.GetNodeId())
	if err != nil {
		return resp, nil
	}
	var state platform.PowerState
	err = m.deps.Nodes.One(ctx, n, func(ctx context.Context, _ int, d platform.Device) (err error) {
		state, err = d.PowerState(ctx)
		return err
	})
	if err != nil {
		m.log.Warn().Str("rack_id", n.RackID).Str("node_id", n.ID).Err(err).Msg("GetPowerState failed")
		return resp, nil
	}
	resp.Status, resp.Pstate = rmspb.ReturnCode_RETURN_CODE_SUCCESS, pstate(state)
	return resp, nil
}

// BatchSetPowerState applies one operation to every caller-supplied node,
// independently and concurrently.
func (m *rackManager) BatchSetPowerState(ctx context.Context, req *rmspb.BatchSetPowerStateRequest) (*rmspb.BatchSetPowerStateResponse, error) {
	op, err := powerOpFromProto(req.GetOperation())
	if err != nil {
		return nil, err
	}
	nodes, err := nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil {
		return nil, errUnavailable("power control")
	}
	results := m.eachNode(ctx, nodes, requireBMC, setPower(op))
	return &rmspb.BatchSetPowerStateResponse{Response: batchResponse(results)}, nil
}

// BatchGetPowerState reads the power state of every caller-supplied node;
// node_power_states lists the nodes that answered.
func (m *rackManager) BatchGetPowerState(ctx context.Context, req *rmspb.BatchGetPowerStateRequest) (*rmspb.BatchGetPowerStateResponse, error) {
	nodes, err := nodesFromProto(req.GetNodes())
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
	resp := &rmspb.BatchGetPowerStateResponse{Response: batchResponse(results)}
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

// eachNode runs op on every node of a batch: a node that repeats an
// earlier (rack, node) pair or fails check is refused without I/O; the rest
// run concurrently through the node runner. op receives the node's index in
// nodes.
func (m *rackManager) eachNode(ctx context.Context, nodes []hw.Node, check func(hw.Node) error, op nodeops.Op) []nodeResult {
	results := make([]nodeResult, len(nodes))
	seen := map[hw.Ref]bool{}
	var run []int // indexes into nodes of the admitted nodes
	for i, n := range nodes {
		results[i].nodeID = n.ID
		switch {
		case seen[n.Ref()]:
			results[i].err = fmt.Errorf("duplicate target rack_id/node_id: %s/%s", n.RackID, n.ID)
		case check != nil:
			results[i].err = check(n)
		}
		seen[n.Ref()] = true
		if results[i].err == nil {
			run = append(run, i)
		}
	}
	admitted := make([]hw.Node, len(run))
	for j, i := range run {
		admitted[j] = nodes[i]
	}
	errs := m.deps.Nodes.Each(ctx, admitted, func(ctx context.Context, j int, d platform.Device) error {
		return op(ctx, run[j], d)
	})
	for j, i := range run {
		results[i].err = errs[j]
	}
	return results
}
