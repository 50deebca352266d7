package rmsserver

import (
	"context"
	"fmt"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fwupdate"
	"github.com/rmsd/rmsd/messages"
)

// Every batch firmware RPC (BatchUpdateFirmwareByNodeType,
// BatchUpdateFirmware, ApplyStoredFirmwareObject, ApplyFirmwareObject)
// ends the same way: each node has an update plan, or a reason it gets
// none; the plans become one batch in the job engine, a parent with one
// child per node, admitted in one registry request (a node another job
// holds, or one named twice, is refused there); the reply has one result
// per node, in request order, and one jobs[] entry per child, each echoing
// the caller's node_id.

// nodeUpdate is one node of a firmware batch.
type nodeUpdate struct {
	node hw.Node
	plan fwupdate.Plan
	// err refuses the node before admission (no child job).
	err error
	// unselected marks a node the request's component filters leave out:
	// it counts as a success and gets no job.
	unselected bool
}

// firmwareBatch is a batch ready to be admitted.
type firmwareBatch struct {
	// operation names the RPC in logs and messages.
	operation string
	rackID    string
	nodes     []nodeUpdate
	// cleanup, optional, runs once the parent is sealed.
	cleanup *messages.CleanupPlan
	// gate, optional, wraps node i's workflow (stageFirmwareBatch).
	gate func(i int, wf messages.Workflow) messages.Workflow
}

// firmwareBatchResult is what the RPC answers.
type firmwareBatchResult struct {
	response *rmspb.NodeBatchResponse
	jobs     []*rmspb.NodeFirmwareJobInfo
	// started are the nodes a child job was admitted for.
	started []hw.Node
	// parentID is the parent job, "" when the engine refused the parent.
	parentID string
}

// startFirmwareBatch admits the batch (admitBatch) and words its reply.
// The error is the engine's failure, already a gRPC status; the cleanup
// directory is then the caller's to remove, as it is when parentID is "".
func (m *rackManager) startFirmwareBatch(ctx context.Context, b firmwareBatch) (firmwareBatchResult, error) {
	nodes := make([]batchNode, len(b.nodes))
	for i, nu := range b.nodes {
		nodes[i] = batchNode{node: nu.node, err: nu.err, skip: nu.unselected}
		if nu.err == nil && !nu.unselected {
			nodes[i].wf = nu.plan.Workflow(m.firmwareDeps())
			if b.gate != nil {
				nodes[i].wf = b.gate(i, nodes[i].wf)
			}
		}
	}
	a, err := m.admitBatch(ctx, b.operation, messages.TypeFirmwareUpdate, b.rackID, nodes, b.cleanup)
	if err != nil {
		return firmwareBatchResult{}, err
	}
	return firmwareBatchResult{parentID: a.parentID, started: a.started,
		response: a.response(func(started int) batchMessage { return firmwareBatchMessage(b.operation, started) }),
		jobs: jobInfos(a, nodes, func(node, job string) *rmspb.NodeFirmwareJobInfo {
			return &rmspb.NodeFirmwareJobInfo{NodeId: node, JobId: job}
		})}, nil
}

// firmwareBatchMessage words a firmware batch reply.
func firmwareBatchMessage(operation string, started int) batchMessage {
	return func(results []nodeResult, st *rmspb.NodeOperationStats) string {
		msg := fmt.Sprintf("%s: firmware update started for %d of %d nodes", operation, started, st.GetTotalNodes())
		if skipped := int(st.GetSuccessfulNodes()) - started; skipped > 0 {
			msg += fmt.Sprintf(" (%d not selected by the component filters)", skipped)
		}
		if st.GetFailedNodes() == 0 {
			return msg + ". Use GetFirmwareJobStatus with response.job_id to track progress."
		}
		return msg + "; failed: " + summarise(failureList(results, "node_id=%s: %v"), "; ")
	}
}

// firmwareDeps are the dependencies of every firmware update workflow.
func (m *rackManager) firmwareDeps() fwupdate.Deps {
	return fwupdate.Deps{Nodes: m.deps.Nodes, Timing: m.deps.FirmwareTiming, NIC: m.deps.NICFlasher,
		FlintProfiles: m.deps.FlintProfiles}
}

// expectedAPs resolves a node's inventory profile to the firmware
// inventory ids it requires: nil without a profile, an error for an empty
// or unknown one (refused before any job is created, as upstream).
func (m *rackManager) expectedAPs(n hw.Node) ([]string, error) {
	if !n.HasInventoryProfile {
		return nil, nil
	}
	aps, ok := m.deps.InventoryProfiles[n.InventoryProfile]
	if n.InventoryProfile == "" || !ok {
		return nil, fmt.Errorf("inventory_profile %s is not configured in [workflows.expected_inventory_profiles]", hw.QuoteShort(n.InventoryProfile))
	}
	if aps == nil {
		aps = []string{}
	}
	return aps, nil
}
