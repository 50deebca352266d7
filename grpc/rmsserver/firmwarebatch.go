package rmsserver

import (
	"context"
	"errors"
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

// nodeKey is a node's identity within the engine.
type nodeKey struct{ rack, node string }

// startFirmwareBatch admits the batch. A parent to which no child was
// admitted is sealed Failed at once (its cleanup then runs). The error is
// the engine's failure, already a gRPC status; the cleanup directory is
// then the caller's to remove.
func (m *rackManager) startFirmwareBatch(ctx context.Context, b firmwareBatch) (firmwareBatchResult, error) {
	var targets []messages.BatchTarget
	for _, nu := range b.nodes {
		if nu.err != nil || nu.unselected {
			continue
		}
		targets = append(targets, messages.BatchTarget{
			RackID: nu.node.RackID, NodeID: nu.node.ID, Description: "Queued",
			Workflow: nu.plan.Workflow(m.firmwareDeps()),
		})
	}
	parent := messages.JobSpec{ID: newJobID(), Type: messages.TypeFirmwareUpdate, RackID: b.rackID}
	rep, err := m.deps.Jobs.CreateBatch(ctx, parent, targets, b.cleanup)
	var refused *messages.RefusedError
	switch {
	case errors.As(err, &refused):
		return m.refusedFirmwareBatch(b, refused), nil
	case err != nil:
		m.cancelUnanswered(ctx, parent.ID, err)
		return firmwareBatchResult{}, engineError(err)
	}
	out := firmwareBatchResult{parentID: rep.Parent.ID}
	admitted := make(map[nodeKey]string, len(rep.Admitted))
	for _, s := range rep.Admitted {
		admitted[nodeKey{s.RackID, s.NodeID}] = s.ID
	}
	rejected := map[nodeKey][]string{}
	for _, r := range rep.Rejected {
		k := nodeKey{r.RackID, r.NodeID}
		rejected[k] = append(rejected[k], r.Message)
	}
	results := make([]nodeResult, len(b.nodes))
	for i, nu := range b.nodes {
		results[i] = nodeResult{nodeID: nu.node.ID, err: nu.err}
		if nu.err != nil || nu.unselected {
			continue
		}
		k := nodeKey{nu.node.RackID, nu.node.ID}
		if id, ok := admitted[k]; ok {
			delete(admitted, k) // a node named twice is admitted once
			out.jobs = append(out.jobs, &rmspb.NodeFirmwareJobInfo{NodeId: nu.node.ID, JobId: id})
			out.started = append(out.started, nu.node)
			continue
		}
		msg := "not admitted"
		if q := rejected[k]; len(q) > 0 {
			msg, rejected[k] = q[0], q[1:]
		}
		results[i].err = errors.New(msg)
	}
	out.response = batchResponse(results, firmwareBatchMessage(b.operation, len(out.started)))
	out.response.JobId = rep.Parent.ID
	if len(out.started) == 0 {
		m.sealEmptyParent(ctx, rep.Parent.ID, b.operation, results)
	}
	m.log.Info().Str("operation", b.operation).Str("job_id", rep.Parent.ID).Str("rack_id", b.rackID).
		Int("nodes", len(b.nodes)).Int("started", len(out.started)).Msg("firmware batch admitted")
	return out, nil
}

// refusedFirmwareBatch answers a batch whose parent the engine refused
// (at capacity, shutting down): every node fails with the reason.
func (m *rackManager) refusedFirmwareBatch(b firmwareBatch, refused *messages.RefusedError) firmwareBatchResult {
	results := make([]nodeResult, len(b.nodes))
	for i, nu := range b.nodes {
		results[i] = nodeResult{nodeID: nu.node.ID, err: nu.err}
		if results[i].err == nil {
			results[i].err = fmt.Errorf("firmware update not started: %s", refused.Message)
		}
	}
	m.log.Warn().Str("operation", b.operation).Str("rack_id", b.rackID).Str("reason", refused.Message).Msg("firmware batch refused")
	return firmwareBatchResult{response: batchResponse(results, firmwareBatchMessage(b.operation, 0))}
}

// sealEmptyParent fails a parent no child was admitted to, naming the
// first failures, so that polling it ends.
func (m *rackManager) sealEmptyParent(ctx context.Context, id, operation string, results []nodeResult) {
	msg := "No firmware update was started: the request selected no firmware for any node"
	if failed := failureList(results, "node_id=%s: %v"); len(failed) > 0 {
		msg = "No firmware update was started: " + summarise(failed, "; ")
	}
	out := messages.Failed(messages.NewFailure(messages.ErrorInvalidArgument, clip(msg, maxMessage)))
	if _, err := m.deps.Jobs.Seal(context.WithoutCancel(ctx), id, out); err != nil {
		m.log.Error().Str("job_id", id).Str("operation", operation).Err(err).Msg("could not seal a firmware batch parent without children")
	}
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
	return fwupdate.Deps{Nodes: m.deps.Nodes, Timing: m.deps.FirmwareTiming}
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
