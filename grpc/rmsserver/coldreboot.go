package rmsserver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/coldreboot"
	"github.com/rmsd/rmsd/messages"
)

// JobStarter creates jobs on the job engine.
type JobStarter interface {
	Create(ctx context.Context, spec messages.JobSpec, wf messages.Workflow, cleanup *messages.CleanupPlan) (messages.JobSnapshot, error)
}

// newJobID returns a fresh job id; the coordinator's id is fixed before its
// reservations are made so they can name it.
func newJobID() string { return uuid.NewString() }

// coldRebootTiming applies the request's timing overrides (0 or absent
// means the default) to the runbook defaults.
func coldRebootTiming(req *rmspb.ExecuteColdRebootRequest) coldreboot.Timing {
	t := coldreboot.DefaultTiming()
	set := func(d *time.Duration, v *uint32) {
		if v != nil && *v > 0 {
			*d = time.Duration(*v) * time.Second
		}
	}
	set(&t.PrestageShutdownFloor, req.PrestageShutdownFloorSeconds)
	set(&t.PrestageShutdownPollMax, req.PrestageShutdownPollMaxSeconds)
	set(&t.DischargeFloor, req.DischargeFloorSeconds)
	set(&t.DischargePollMax, req.DischargePollMaxSeconds)
	set(&t.BMCUpFloor, req.BmcUpFloorSeconds)
	set(&t.BMCUpPollMax, req.BmcUpPollMaxSeconds)
	set(&t.NVOSHelloBackoff, req.NvosHelloBackoffSeconds)
	set(&t.ComputeBootWait, req.ComputeBootWaitSeconds)
	set(&t.PollInterval, req.PollIntervalSeconds)
	return t
}

// refuseAll answers a refused cold reboot: every node fails, those without
// a reason of their own with why.
func refuseAll(nodes []hw.Node, nodeErrs []error, why error) *rmspb.ExecuteColdRebootResponse {
	results := make([]nodeResult, len(nodes))
	for i, n := range nodes {
		results[i] = nodeResult{nodeID: n.ID, err: why}
		if nodeErrs != nil && nodeErrs[i] != nil {
			results[i].err = nodeErrs[i]
		}
	}
	resp := batchResponse(results)
	resp.Message = "cold reboot not started: " + why.Error()
	return &rmspb.ExecuteColdRebootResponse{Response: resp}
}

// ExecuteColdReboot starts the rack cold-reboot runbook as a coordinator
// job (poll it with GetJobStatus). Admission is all or nothing: the rack's
// power guard, a reservation job on every node and the coordinator on the
// rack's sentinel node; if any is refused, nothing starts.
func (m *rackManager) ExecuteColdReboot(ctx context.Context, req *rmspb.ExecuteColdRebootRequest) (*rmspb.ExecuteColdRebootResponse, error) {
	nodes, err := nodesFromProto(req.GetNodes())
	if err != nil {
		return nil, err
	}
	if m.deps.Racks == nil || m.deps.Nodes == nil || m.deps.Starter == nil || m.deps.SwitchNVUE == nil {
		return nil, errUnavailable("cold reboot")
	}
	plan, nodeErrs, err := coldreboot.Check(nodes, coldRebootTiming(req))
	if err != nil {
		return refuseAll(nodes, nodeErrs, err), nil
	}
	releaseGuard, err := m.deps.Racks.TryGuard(plan.RackID, "cold reboot")
	if err != nil {
		return refuseAll(nodes, nil, err), nil
	}
	release := make(chan struct{})
	var once sync.Once
	releaseAll := func() {
		once.Do(func() {
			close(release)
			releaseGuard()
		})
	}
	coordinatorID := newJobID()
	for _, n := range nodes {
		_, err := m.deps.Starter.Create(ctx, messages.JobSpec{
			Type: messages.TypeColdRebootSequence, RackID: n.RackID, NodeID: n.ID,
			Description: "Reserved for cold reboot",
		}, coldreboot.Hold(coordinatorID, release), nil)
		if err != nil {
			releaseAll()
			return refuseAll(nodes, nil, fmt.Errorf("node %s: %w", n.ID, err)), nil
		}
	}
	job, err := m.deps.Starter.Create(ctx, messages.JobSpec{
		ID: coordinatorID, Type: messages.TypeColdRebootSequence, RackID: plan.RackID,
		NodeID: coldreboot.SentinelNode(plan.RackID), Description: "Rack reboot queued",
	}, plan.Workflow(coldreboot.Deps{Nodes: m.deps.Nodes, NVUE: m.deps.SwitchNVUE}, releaseAll), nil)
	if err != nil {
		releaseAll()
		var refused *messages.RefusedError
		if !errors.As(err, &refused) {
			err = fmt.Errorf("cold reboot coordinator: %w", err)
		}
		return refuseAll(nodes, nil, err), nil
	}
	m.log.Info().Str("rack_id", plan.RackID).Str("job_id", job.ID).Int("nodes", len(nodes)).Msg("cold reboot started")
	results := make([]nodeResult, len(nodes))
	for i, n := range nodes {
		results[i] = nodeResult{nodeID: n.ID}
	}
	resp := batchResponse(results)
	resp.JobId = job.ID
	resp.Message = fmt.Sprintf("cold reboot of rack %s started as job %s", plan.RackID, job.ID)
	return &rmspb.ExecuteColdRebootResponse{Response: resp}, nil
}
