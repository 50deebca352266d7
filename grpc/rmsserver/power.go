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

// SetPowerState runs one power operation on a registered node. It holds
// the rack's lease (a second registered power change on the rack is
// refused while it runs) and the node's (refused while a job holds the
// node: a firmware flash or a cold reboot is never power-cycled under it).
func (m *rackManager) SetPowerState(ctx context.Context, req *rmspb.SetPowerStateRequest) (*rmspb.SetPowerStateResponse, error) {
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
		m.log.Info().Str("rack_id", req.GetRackId()).Str("node_id", req.GetNodeId()).Err(err).Msg("SetPowerState refused")
		return fail, nil
	}
	l, err := m.lease(ctx, "SetPowerState", []string{n.RackID}, []hw.Node{n}, false)
	if err != nil {
		return nil, err
	}
	defer l.release()
	if l.err != nil {
		m.log.Info().Str("rack_id", n.RackID).Str("node_id", n.ID).Err(l.err).Msg("SetPowerState refused")
		return fail, nil
	}
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
// independently and concurrently. Each node is leased for the operation:
// a node a job holds is that node's failure, and no job can start on a
// node while its power changes.
func (m *rackManager) BatchSetPowerState(ctx context.Context, req *rmspb.BatchSetPowerStateRequest) (*rmspb.BatchSetPowerStateResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.BatchSetPowerStateResponse{Response: noNodesResponse()}, nil
	}
	op, err := powerOpFromProto(req.GetOperation())
	if err != nil {
		return nil, err
	}
	nodes, err := nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("power control")
	}
	results, err := m.eachLeasedNode(ctx, "BatchSetPowerState", nodes, requireBMC, setPower(op))
	if err != nil {
		return nil, err
	}
	return &rmspb.BatchSetPowerStateResponse{Response: batchResponse(results)}, nil
}

// BatchGetPowerState reads the power state of every caller-supplied node;
// node_power_states lists the nodes that answered.
func (m *rackManager) BatchGetPowerState(ctx context.Context, req *rmspb.BatchGetPowerStateRequest) (*rmspb.BatchGetPowerStateResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.BatchGetPowerStateResponse{Response: noNodesResponse()}, nil
	}
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
	results, run := admitNodes(nodes, check)
	m.runNodes(ctx, nodes, results, run, op)
	return results
}

// eachLeasedNode is eachNode for operations that change hardware: the
// admitted nodes are leased from the job engine first, and a node the
// engine refuses (a job holds it) fails with the engine's reason.
func (m *rackManager) eachLeasedNode(ctx context.Context, operation string, nodes []hw.Node, check func(hw.Node) error, op nodeops.Op) ([]nodeResult, error) {
	results, run := admitNodes(nodes, check)
	admitted := make([]hw.Node, len(run))
	for j, i := range run {
		admitted[j] = nodes[i]
	}
	l, err := m.lease(ctx, operation, nil, admitted, true)
	if err != nil {
		return nil, err
	}
	defer l.release()
	granted := run[:0:0]
	for j, i := range run {
		if l.refused[j] != nil {
			results[i].err = l.refused[j]
			continue
		}
		granted = append(granted, i)
	}
	m.runNodes(ctx, nodes, results, granted, op)
	return results, nil
}

// admitNodes checks a batch's nodes without I/O: it returns one result per
// node (failed for a repeated (rack, node) pair or a failed check) and the
// indexes of the nodes to run.
func admitNodes(nodes []hw.Node, check func(hw.Node) error) ([]nodeResult, []int) {
	results := make([]nodeResult, len(nodes))
	seen := map[hw.Ref]bool{}
	var run []int
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
	return results, run
}

// runNodes runs op on nodes[run...] through the node runner and records
// each error in results.
func (m *rackManager) runNodes(ctx context.Context, nodes []hw.Node, results []nodeResult, run []int, op nodeops.Op) {
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
}
