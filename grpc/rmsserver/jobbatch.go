package rmsserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// Every batch job RPC (firmware updates and applies, switch system images,
// switch passwords and resets) ends the same way: each node has a child
// workflow, or a reason it gets none; the workflows become one batch in the
// job engine, a parent and one child per node, admitted in one registry
// request, where a node another job holds, or one named twice, is refused.
// admitBatch does that once for all of them; each RPC words its own reply.

// batchNode is one node of a batch job request.
type batchNode struct {
	node hw.Node
	// wf is the node's child workflow; nil when err is set or skip.
	wf messages.Workflow
	// err refuses the node before admission (no child job).
	err error
	// skip leaves the node out on purpose: a success without a child.
	skip bool
}

// admission is what the engine made of a batch.
type admission struct {
	// parentID is the parent job, "" when the engine refused the parent.
	parentID string
	// results has one entry per node, in request order.
	results []nodeResult
	// jobIDs has the child job id of each node, "" for a node without one.
	jobIDs []string
	// started are the nodes a child was admitted for, in request order.
	started []hw.Node
}

// admitBatch admits a parent of type t and one child per node that has a
// workflow; the children begin once the RPC has answered (afterAnswer). A
// parent the engine refuses (at capacity, shutting down) fails every such
// node with the reason; a parent no child was admitted to is
// sealed Failed at once, so polling it ends, and its cleanup then runs. The
// error is the engine's failure, already a gRPC status.
func (m *rackManager) admitBatch(ctx context.Context, operation string, t messages.JobType, rackID string,
	nodes []batchNode, cleanup *messages.CleanupPlan) (admission, error) {
	var targets []messages.BatchTarget
	var targetNodes []hw.Node
	for _, bn := range nodes {
		if bn.err == nil && !bn.skip {
			targets = append(targets, messages.BatchTarget{RackID: bn.node.RackID, NodeID: bn.node.ID, Description: "Queued", Workflow: afterAnswer(ctx, bn.wf)})
			targetNodes = append(targetNodes, bn.node)
		}
	}
	for i, ref := range nodeRefs(ctx, targetNodes) {
		targets[i].Devices = ref.Devices
	}
	out := admission{results: make([]nodeResult, len(nodes)), jobIDs: make([]string, len(nodes))}
	for i, bn := range nodes {
		out.results[i] = nodeResult{nodeID: bn.node.ID, err: bn.err}
	}
	parent := messages.JobSpec{ID: newJobID(), Type: t, RackID: rackID}
	rep, err := m.deps.Jobs.CreateBatch(ctx, parent, targets, cleanup)
	var refused *messages.RefusedError
	switch {
	case errors.As(err, &refused):
		for i, bn := range nodes {
			if bn.err == nil && !bn.skip {
				out.results[i].err = fmt.Errorf("%s not started: %w", t.BatchNoun(), refused)
			}
		}
		m.failedBatch(ctx, nodes, out.results)
		return out, nil
	case err != nil:
		m.cancelUnanswered(ctx, parent.ID, err)
		return admission{}, engineError(err)
	}
	out.parentID = rep.Parent.ID
	admitted := make(map[nodeKey]string, len(rep.Admitted))
	for _, s := range rep.Admitted {
		admitted[nodeKey{s.RackID, s.NodeID}] = s.ID
	}
	rejected := map[nodeKey][]messages.RejectedTarget{}
	for _, r := range rep.Rejected {
		k := nodeKey{r.RackID, r.NodeID}
		rejected[k] = append(rejected[k], r)
	}
	for i, bn := range nodes {
		if bn.err != nil || bn.skip {
			continue
		}
		k := nodeKey{bn.node.RackID, bn.node.ID}
		if id, ok := admitted[k]; ok {
			delete(admitted, k) // a node named twice is admitted once
			out.jobIDs[i] = id
			out.started = append(out.started, bn.node)
			continue
		}
		out.results[i].err = errors.New("not admitted")
		if q := rejected[k]; len(q) > 0 {
			// The refusal keeps the holder job for the log.
			out.results[i].err = &messages.RefusedError{Code: q[0].Code, Message: q[0].Message, Holder: q[0].Holder}
			rejected[k] = q[1:]
		}
	}
	m.failedBatch(ctx, nodes, out.results)
	if len(out.started) == 0 {
		m.sealEmptyParent(ctx, rep.Parent.ID, operation, t, out.results)
	}
	m.log.Info().Str("operation", operation).Str("job_id", rep.Parent.ID).Str("rack_id", rackID).
		Int("nodes", len(nodes)).Int("started", len(out.started)).Msg("batch admitted")
	return out, nil
}

// failedBatch records the failed nodes of a batch job request as in-band
// failures of the RPC.
func (m *rackManager) failedBatch(ctx context.Context, nodes []batchNode, results []nodeResult) {
	for i, r := range results {
		if r.err != nil && i < len(nodes) {
			m.failed(ctx, nodes[i].node.RackID, nodes[i].node.ID, r.err)
		}
	}
}

// sealEmptyParent fails a parent no child was admitted to, naming the
// first failures.
func (m *rackManager) sealEmptyParent(ctx context.Context, id, operation string, t messages.JobType, results []nodeResult) {
	msg := fmt.Sprintf("No %s was started: the request selected no node", t.BatchNoun())
	if failed := failureList(results, "node_id=%s: %v"); len(failed) > 0 {
		msg = fmt.Sprintf("No %s was started: %s", t.BatchNoun(), summarise(failed, "; "))
	}
	out := messages.Failed(messages.NewFailure(messages.ErrorInvalidArgument, clip(msg, maxMessage)))
	if _, err := m.deps.Jobs.Seal(context.WithoutCancel(ctx), id, out); err != nil {
		m.log.Error().Str("job_id", id).Str("operation", operation).Err(loggedErr(err)).Msg("could not seal a batch parent without children")
	}
}

// nodeKey is a node's identity within the engine.
type nodeKey struct{ rack, node string }

// response is the batch's NodeBatchResponse, worded by message, with the
// parent's job id.
func (a admission) response(message func(started int) batchMessage) *rmspb.NodeBatchResponse {
	resp := batchResponse(a.results, message(len(a.started)))
	resp.JobId = a.parentID
	return resp
}

// jobInfos lists the children as an RPC's jobs[] entries, in request
// order, each with the caller's node_id.
func jobInfos[T any](a admission, nodes []batchNode, entry func(nodeID, jobID string) T) []T {
	var out []T
	for i, id := range a.jobIDs {
		if id != "" {
			out = append(out, entry(nodes[i].node.ID, id))
		}
	}
	return out
}
