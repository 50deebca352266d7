package rmsserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/switchadmin"
	"github.com/rmsd/rmsd/messages"
)

// The switch administration RPCs (UpdateSwitchSystemPassword,
// BatchResetSwitchFactoryDefault, BatchResetSwitchSdnFactoryDefault) start
// one batch each: a parent and one child per switch, admitted in one job
// engine request, so a switch another job holds is refused there, naming the
// holder. Per-node results report admission only; the children's outcomes
// are read with GetJobStatus.

// switchBatch is a switch administration batch ready to be admitted.
type switchBatch struct {
	// operation names the RPC in logs.
	operation string
	jobType   messages.JobType
	nodes     []hw.Node
	// workflow is the child workflow of one admitted switch.
	workflow func(n hw.Node) messages.Workflow
}

// switchTarget refuses, without I/O, a node a switch workflow cannot drive:
// not a switch, or without a host endpoint and its login.
func switchTarget(n hw.Node) error {
	if n.Type.Kind() != hw.KindSwitch {
		return fmt.Errorf("node type %s is not an NVLink switch", n.Type.Name())
	}
	if n.Host == nil || n.Host.Host() == "" {
		return errors.New("switch has no host_endpoint")
	}
	if n.Host.Credentials.Username == "" || n.Host.Credentials.Password.IsZero() {
		return errors.New("host_endpoint needs a username and password")
	}
	return nil
}

// startSwitchBatch admits b and answers one result per node, in request
// order. A parent no child was admitted to is sealed Failed at once.
func (m *rackManager) startSwitchBatch(ctx context.Context, b switchBatch) (*rmspb.NodeBatchResponse, error) {
	resp, _, err := m.admitSwitchBatch(ctx, b)
	return resp, err
}

// switchChild is one admitted child of a switch batch.
type switchChild struct{ nodeID, jobID string }

// admitSwitchBatch is startSwitchBatch that also returns the admitted
// children, in request order.
func (m *rackManager) admitSwitchBatch(ctx context.Context, b switchBatch) (*rmspb.NodeBatchResponse, []switchChild, error) {
	results, run := admitNodes(b.nodes, switchTarget)
	targets := make([]messages.BatchTarget, 0, len(run))
	for _, i := range run {
		n := b.nodes[i]
		targets = append(targets, messages.BatchTarget{RackID: n.RackID, NodeID: n.ID, Description: "Queued", Workflow: b.workflow(n)})
	}
	parent := messages.JobSpec{ID: newJobID(), Type: b.jobType, RackID: commonRack(b.nodes)}
	rep, err := m.deps.Jobs.CreateBatch(ctx, parent, targets, nil)
	var refused *messages.RefusedError
	switch {
	case errors.As(err, &refused):
		for _, i := range run {
			results[i].err = fmt.Errorf("%s not started: %s", b.jobType.BatchNoun(), refused.Message)
		}
		m.log.Warn().Str("operation", b.operation).Str("reason", refused.Message).Msg("switch batch refused")
		return batchResponse(results, switchBatchMessage(b.jobType, 0)), nil, nil
	case err != nil:
		m.cancelUnanswered(ctx, parent.ID, err)
		return nil, nil, engineError(err)
	}
	admitted := make(map[nodeKey]string, len(rep.Admitted))
	for _, s := range rep.Admitted {
		admitted[nodeKey{s.RackID, s.NodeID}] = s.ID
	}
	var children []switchChild
	rejected := map[nodeKey]string{}
	for _, r := range rep.Rejected {
		rejected[nodeKey{r.RackID, r.NodeID}] = r.Message
	}
	started := 0
	for _, i := range run {
		k := nodeKey{b.nodes[i].RackID, b.nodes[i].ID}
		if id, ok := admitted[k]; ok {
			started++
			children = append(children, switchChild{nodeID: b.nodes[i].ID, jobID: id})
			continue
		}
		results[i].err = errors.New("not admitted")
		if msg, ok := rejected[k]; ok {
			results[i].err = errors.New(msg)
		}
	}
	resp := batchResponse(results, switchBatchMessage(b.jobType, started))
	resp.JobId = rep.Parent.ID
	if started == 0 {
		msg := fmt.Sprintf("No %s was started: %s", b.jobType.BatchNoun(), summarise(failureList(results, "node_id=%s: %v"), "; "))
		out := messages.Failed(messages.NewFailure(messages.ErrorInvalidArgument, clip(msg, maxMessage)))
		if _, err := m.deps.Jobs.Seal(context.WithoutCancel(ctx), rep.Parent.ID, out); err != nil {
			m.log.Error().Str("job_id", rep.Parent.ID).Str("operation", b.operation).Err(err).Msg("could not seal a switch batch parent without children")
		}
	}
	m.log.Info().Str("operation", b.operation).Str("job_id", rep.Parent.ID).Int("nodes", len(b.nodes)).
		Int("started", started).Msg("switch batch admitted")
	return resp, children, nil
}

// switchBatchMessage words a switch batch reply.
func switchBatchMessage(t messages.JobType, started int) batchMessage {
	return func(results []nodeResult, st *rmspb.NodeOperationStats) string {
		msg := fmt.Sprintf("Started %d of %d %s", started, st.GetTotalNodes(), t.BatchNounPlural())
		if st.GetFailedNodes() == 0 {
			poll := "GetJobStatus"
			if t == messages.TypeSwitchCertificate {
				poll = "GetConfigureSwitchCertificateJobStatus"
			}
			return msg + ". Use " + poll + " with response.job_id to track progress."
		}
		return msg + "; failed: " + summarise(failureList(results, "node_id=%s: %v"), "; ")
	}
}

// refuseSwitchBatch answers a request refused as a whole before any job:
// every node fails with why.
func refuseSwitchBatch(nodes []hw.Node, t messages.JobType, why error) *rmspb.NodeBatchResponse {
	results := make([]nodeResult, len(nodes))
	for i, n := range nodes {
		results[i] = nodeResult{nodeID: n.ID, err: why}
	}
	return batchResponse(results, func([]nodeResult, *rmspb.NodeOperationStats) string {
		return clip(fmt.Sprintf("No %s was started: %v", t.BatchNoun(), why), maxMessage)
	})
}

// switchAdminDeps are the dependencies of every switch administration
// workflow.
func (m *rackManager) switchAdminDeps() switchadmin.Deps {
	return switchadmin.Deps{Nodes: m.deps.Nodes, Timing: m.deps.SwitchAdminTiming}
}
