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

// switchBatch is a switch administration batch ready to be admitted; a
// batch of other nodes (StartSystemValidation) brings its own check.
type switchBatch struct {
	// operation names the RPC in logs.
	operation string
	jobType   messages.JobType
	nodes     []hw.Node
	// check refuses, without I/O, a node the workflow cannot drive (nil:
	// switchTarget). It runs after the identity and address checks.
	check func(n hw.Node) error
	// workflow is the child workflow of one admitted node.
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

// startSwitchBatch admits b (admitBatch) and answers one result per node,
// in request order.
func (m *rackManager) startSwitchBatch(ctx context.Context, b switchBatch) (*rmspb.NodeBatchResponse, error) {
	resp, _, err := m.admitSwitchBatch(ctx, b)
	return resp, err
}

// switchChild is one admitted child of a switch batch.
type switchChild struct{ nodeID, jobID string }

// admitSwitchBatch is startSwitchBatch that also returns the admitted
// children, in request order.
func (m *rackManager) admitSwitchBatch(ctx context.Context, b switchBatch) (*rmspb.NodeBatchResponse, []switchChild, error) {
	check := b.check
	if check == nil {
		check = switchTarget
	}
	nodes := make([]batchNode, len(b.nodes))
	for i, n := range b.nodes {
		nodes[i] = batchNode{node: n, err: errors.Join(identityProblem(n), addressProblem(n))}
		if nodes[i].err == nil {
			nodes[i].err = check(n)
		}
		if nodes[i].err == nil {
			nodes[i].wf = b.workflow(n)
		}
	}
	a, err := m.admitBatch(ctx, b.operation, b.jobType, commonRack(b.nodes), nodes, nil)
	if err != nil {
		return nil, nil, err
	}
	children := jobInfos(a, nodes, func(node, job string) switchChild { return switchChild{nodeID: node, jobID: job} })
	return a.response(func(started int) batchMessage { return switchBatchMessage(b.jobType, started) }), children, nil
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
