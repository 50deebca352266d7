package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/coldreboot"
	"github.com/rmsd/rmsd/messages"
)

// newJobID returns a fresh job id; the coordinator's id is fixed before it
// is admitted, so a failed admission can still be cancelled by id.
func newJobID() string { return uuid.NewString() }

// cancelTimeout bounds the cancel sent after an admission that failed
// without an answer.
const cancelTimeout = 10 * time.Second

// coldRebootTiming applies the request's timing overrides (0 or absent
// means the default) to the runbook defaults.
func coldRebootTiming(req *rmspb.ExecuteColdRebootRequest) coldreboot.Timing {
	t := coldreboot.DefaultTiming()
	set := func(d *time.Duration, v uint32) {
		if v > 0 {
			*d = time.Duration(v) * time.Second
		}
	}
	set(&t.PrestageShutdownFloor, req.GetPrestageShutdownFloorSeconds())
	set(&t.PrestageShutdownPollMax, req.GetPrestageShutdownPollMaxSeconds())
	set(&t.DischargeFloor, req.GetDischargeFloorSeconds())
	set(&t.DischargePollMax, req.GetDischargePollMaxSeconds())
	set(&t.BMCUpFloor, req.GetBmcUpFloorSeconds())
	set(&t.BMCUpPollMax, req.GetBmcUpPollMaxSeconds())
	set(&t.NVOSHelloBackoff, req.GetNvosHelloBackoffSeconds())
	set(&t.ComputeBootWait, req.GetComputeBootWaitSeconds())
	set(&t.PollInterval, req.GetPollIntervalSeconds())
	return t
}

// refuseAll answers a refused cold reboot: every node fails, with its own
// reason where it has one (nodeErrs, by index), else saying why the whole
// request was refused.
func refuseAll(nodes []hw.Node, nodeErrs []error, why error) *rmspb.ExecuteColdRebootResponse {
	notStarted := fmt.Errorf("cold reboot not started: %w", why)
	results := make([]nodeResult, len(nodes))
	for i, n := range nodes {
		results[i] = nodeResult{nodeID: n.ID, err: notStarted}
		if nodeErrs != nil && nodeErrs[i] != nil {
			results[i].err = nodeErrs[i]
		}
	}
	resp := batchResponse(results, func([]nodeResult, *rmspb.NodeOperationStats) string {
		return clip(notStarted.Error(), maxMessage)
	})
	return &rmspb.ExecuteColdRebootResponse{Response: resp}
}

// ExecuteColdReboot starts the rack cold-reboot runbook as a coordinator
// job (poll it with GetJobStatus). Admission is one job-engine request, all
// or nothing: the coordinator on the rack's sentinel node, the rack's lease
// and one reservation child per node. If anything is busy, nothing starts;
// every node the runbook drives stays held until the coordinator ends.
func (m *rackManager) ExecuteColdReboot(ctx context.Context, req *rmspb.ExecuteColdRebootRequest) (*rmspb.ExecuteColdRebootResponse, error) {
	if len(req.GetNodes().GetNodes()) == 0 {
		return &rmspb.ExecuteColdRebootResponse{Response: noNodesResponse()}, nil
	}
	if err := checkDurations(req); err != nil {
		return nil, err
	}
	nodes, err := m.deps.nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Nodes == nil || m.deps.Jobs == nil {
		return nil, errUnavailable("cold reboot")
	}
	plan, nodeErrs, err := coldreboot.Check(nodes, coldRebootTiming(req))
	if err != nil {
		return refuseAll(nodes, nodeErrs, err), nil
	}
	if m.deps.Racks != nil {
		if registered, err := m.deps.Racks.RackNodes(plan.RackID); err == nil {
			plan.LeaveOut(registered) // an unregistered rack has nothing left out
		}
	}
	id := newJobID()
	res := &messages.Reservation{HoldRack: true, Description: "Reserved by cold reboot job " + id}
	res.Nodes = nodeRefs(ctx, nodes)
	spec := messages.JobSpec{
		ID: id, Type: messages.TypeColdRebootSequence, RackID: plan.RackID,
		NodeID: coldreboot.SentinelNode(plan.RackID), Description: "Rack reboot queued",
	}
	wf := plan.Workflow(coldreboot.Deps{Nodes: m.deps.Nodes, DrainWindow: m.deps.DrainWindow})
	rep, err := m.deps.Jobs.CreateReserved(ctx, spec, wf, res)
	var refused *messages.RefusedError
	switch {
	case errors.As(err, &refused):
		return refuseAll(nodes, conflictsByNode(nodes, rep.Conflicts), refused), nil
	case err != nil:
		m.cancelUnanswered(ctx, id, err)
		return nil, engineError(err)
	}
	m.log.Info().Str("rack_id", plan.RackID).Str("job_id", id).Int("nodes", len(nodes)).Int("left_out", len(plan.LeftOut)).
		Msg("cold reboot started")
	n := uint32(len(nodes))
	return &rmspb.ExecuteColdRebootResponse{Response: &rmspb.NodeBatchResponse{
		Status: rmspb.ReturnCode_RETURN_CODE_SUCCESS,
		JobId:  id,
		Message: fmt.Sprintf("Cold reboot started for %d nodes. Use GetJobStatus with response.job_id to track per-stage progress.",
			len(nodes)) + leftOutMessage(plan),
		Stats: &rmspb.NodeOperationStats{TotalNodes: n, SuccessfulNodes: n},
	}}, nil
}

// cancelUnanswered cancels a job whose admission failed without an answer
// (a deadline while the request waited in the registry's queue): the
// registry may still admit it, and nobody would know its id.
func (m *rackManager) cancelUnanswered(ctx context.Context, id string, cause error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer cancel()
	signalled, err := m.deps.Jobs.Cancel(cctx, id)
	switch {
	case errors.Is(err, messages.ErrJobNotFound):
		m.log.Warn().Str("job_id", id).AnErr("cause", cause).Msg("job admission failed without an answer; the job was never admitted")
	case err != nil:
		m.log.Error().Str("job_id", id).AnErr("cause", loggedErr(cause)).Err(loggedErr(err)).Msg("job admission failed without an answer and the job could not be cancelled")
	default:
		m.log.Warn().Str("job_id", id).AnErr("cause", cause).Bool("signalled", signalled).Msg("job admission failed without an answer; the job is cancelled")
	}
}

// conflictsByNode maps a reservation's conflicts onto the request's nodes.
func conflictsByNode(nodes []hw.Node, conflicts []messages.RejectedTarget) []error {
	out := make([]error, len(nodes))
	for _, c := range conflicts {
		for i, n := range nodes {
			if n.RackID == c.RackID && n.ID == c.NodeID {
				out[i] = errors.New(c.Message)
			}
		}
	}
	return out
}

// leftOutMessage names, for the reply, every registered node of the rack
// the request did not list ("" when none): the shelves cut their power
// too.
func leftOutMessage(p coldreboot.Plan) string {
	if len(p.LeftOut) == 0 {
		return ""
	}
	ids := make([]string, len(p.LeftOut))
	for i, n := range p.LeftOut {
		ids[i] = n.ID
	}
	return fmt.Sprintf(" Left out: %d registered node(s) of rack %s are not in the request; the trays among them lose power"+
		" with the shelves, and those On now are powered on again afterwards (result_json left_out says what was done with each): %s.",
		len(ids), p.RackID, strings.Join(ids, ", "))
}
