package rmsserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// UpdateFirmware starts a firmware update of one registered node as a job
// (poll it with GetFirmwareJobStatus). Everything a caller can get wrong is
// answered in band before the job exists: an unknown node, a file outside
// firmware_dir or missing, a target the node type has no use for, a node
// another job holds (UPDATE_IN_PROGRESS, naming that job).
func (m *rackManager) UpdateFirmware(ctx context.Context, req *rmspb.UpdateFirmwareRequest) (*rmspb.UpdateFirmwareResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}, idField{"node_id", req.GetNodeId()}); err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("firmware update")
	}
	fail := func(code rmspb.FirmwareUpdateError, err error) (*rmspb.UpdateFirmwareResponse, error) {
		m.failed(ctx, req.GetRackId(), req.GetNodeId(), err)
		return &rmspb.UpdateFirmwareResponse{Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, ErrorCode: code,
			Message: clip(err.Error(), maxMessage)}, nil
	}
	if req.GetRackId() == "" || req.GetNodeId() == "" {
		return fail(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE, errors.New("rack_id and node_id are required"))
	}
	n, err := m.deps.Racks.Node(req.GetRackId(), req.GetNodeId())
	if err != nil {
		return fail(rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_TARGET_NOT_FOUND, err)
	}
	plan, err := m.directPlan(newFirmwareFiles(m.deps.FirmwareDir), n, requestTargets(req.GetFirmwareTargets(), req.GetTarget(), req.GetFilename()),
		req.GetActivate(), req.GetForceUpdate())
	if err != nil {
		return fail(targetErrorCode(err), err)
	}
	spec := messages.JobSpec{ID: newJobID(), Type: messages.TypeFirmwareUpdate, RackID: n.RackID, NodeID: n.ID, Devices: devicesOf(ctx, n)}
	job, err := m.deps.Jobs.Create(ctx, spec, plan.Workflow(m.firmwareDeps()), nil)
	var refused *messages.RefusedError
	switch {
	case errors.As(err, &refused):
		return fail(firmwareErrorCode(refused.Code), errors.New(refused.Message))
	case err != nil:
		m.cancelUnanswered(ctx, spec.ID, err)
		return nil, engineError(err)
	}
	m.log.Info().Str("rack_id", n.RackID).Str("node_id", n.ID).Str("job_id", job.ID).Int("targets", len(plan.Targets)).
		Bool("activate", plan.Activate).Msg("firmware update started")
	return &rmspb.UpdateFirmwareResponse{Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS, JobId: job.ID,
		ErrorCode: rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_SUCCESS,
		Message:   fmt.Sprintf("Firmware update started for node %s (%d targets). Use GetFirmwareJobStatus with job_id to track progress.", n.ID, len(plan.Targets))}, nil
}

// targetErrorCode is the legacy code of a refused target.
func targetErrorCode(err error) rmspb.FirmwareUpdateError {
	var te *targetError
	if errors.As(err, &te) {
		return te.code
	}
	return rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE
}

// BatchUpdateFirmwareByNodeType updates every registered node of a type
// (node_type, or the descriptor when node_type is unspecified) in a rack
// with the same targets: a parent job and one child per node.
func (m *rackManager) BatchUpdateFirmwareByNodeType(ctx context.Context, req *rmspb.BatchUpdateFirmwareByNodeTypeRequest) (*rmspb.BatchUpdateFirmwareByNodeTypeResponse, error) {
	if err := checkIDs(idField{"rack_id", req.GetRackId()}); err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("firmware update")
	}
	t, err := nodeTypeFromSelector(req.GetNodeType(), req.GetNodeDescriptor())
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*rmspb.BatchUpdateFirmwareByNodeTypeResponse, error) {
		m.failed(ctx, req.GetRackId(), "", err)
		return &rmspb.BatchUpdateFirmwareByNodeTypeResponse{Response: &rmspb.NodeBatchResponse{
			Status: rmspb.ReturnCode_RETURN_CODE_FAILURE, Message: clip(err.Error(), maxMessage), Stats: &rmspb.NodeOperationStats{}}}, nil
	}
	nodes, err := m.deps.Racks.NodesOfType(req.GetRackId(), t)
	if err != nil {
		return fail(err)
	}
	if len(nodes) == 0 {
		return fail(fmt.Errorf("rack %s has no %s nodes", hw.QuoteShort(req.GetRackId()), t.Name()))
	}
	list := requestTargets(req.GetFirmwareTargets(), req.GetTarget(), req.GetFilename())
	b := firmwareBatch{operation: "BatchUpdateFirmwareByNodeType", rackID: req.GetRackId()}
	files := newFirmwareFiles(m.deps.FirmwareDir)
	for _, n := range nodes {
		plan, err := m.directPlan(files, n, list, req.GetActivate(), req.GetForceUpdate())
		b.nodes = append(b.nodes, nodeUpdate{node: n, plan: plan, err: err})
	}
	res, err := m.startFirmwareBatch(ctx, b)
	if err != nil {
		return nil, err
	}
	return &rmspb.BatchUpdateFirmwareByNodeTypeResponse{Response: res.response, Jobs: res.jobs}, nil
}

// BatchUpdateFirmware updates caller-supplied nodes (not registered), each
// with the target list of its node type: firmware_targets keyed by the
// wire enum, node_descriptor_firmware_targets by descriptor (an enum entry
// wins when both name the node's type). A node whose type has no list
// fails; the others run under one parent job.
func (m *rackManager) BatchUpdateFirmware(ctx context.Context, req *rmspb.BatchUpdateFirmwareRequest) (*rmspb.BatchUpdateFirmwareResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.BatchUpdateFirmwareResponse{Response: noNodesResponse()}, nil
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("firmware update")
	}
	lists := map[hw.NodeType][]*rmspb.FirmwareTarget{}
	for _, d := range req.GetNodeDescriptorFirmwareTargets() {
		t, err := descriptorNodeType("node_descriptor_firmware_targets", d.GetNodeDescriptor())
		if err != nil {
			return nil, err
		}
		lists[t] = append(lists[t], d.GetFirmwareTargets().GetTargets()...)
	}
	for k, l := range req.GetFirmwareTargets() {
		t, err := wireNodeType("firmware_targets", k)
		if err != nil {
			return nil, err
		}
		lists[t] = l.GetTargets()
	}
	b := firmwareBatch{operation: "BatchUpdateFirmware", rackID: commonRack(nodes)}
	files := newFirmwareFiles(m.deps.FirmwareDir)
	for _, n := range nodes {
		nu := nodeUpdate{node: n, err: errors.Join(identityProblem(n), addressProblem(n))}
		if nu.err == nil {
			if list, ok := lists[n.Type]; ok {
				nu.plan, nu.err = m.directPlan(files, n, list, req.GetActivate(), req.GetForceUpdate())
			} else {
				nu.err = fmt.Errorf("no firmware targets for node type %s", n.Type.Name())
			}
		}
		b.nodes = append(b.nodes, nu)
	}
	res, err := m.startFirmwareBatch(ctx, b)
	if err != nil {
		return nil, err
	}
	return &rmspb.BatchUpdateFirmwareResponse{Response: res.response, Jobs: res.jobs}, nil
}

// commonRack is the rack every node belongs to, or "" when they span racks.
func commonRack(nodes []hw.Node) string {
	if len(nodes) == 0 {
		return ""
	}
	r := nodes[0].RackID
	for _, n := range nodes[1:] {
		if n.RackID != r {
			return ""
		}
	}
	return r
}
