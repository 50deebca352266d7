package rmsserver

import (
	"context"

	"github.com/rmsd/rmsd/messages"
)

// afterAnswer holds a batch child's workflow until the RPC that admitted
// it has ended, so that a batch's answer (its reply built, encoded and
// sent, and its audit record written) is not slowed by a thousand
// children taking their first step at the same moment. gRPC cancels a
// call's context once its status is written (or the caller went away), so
// the children begin right after the answer. Nothing is lost while they
// wait: they are admitted, journaled and Queued before the answer, a
// cancel reaches them as it would a running child (the workflow runs, and
// finds its context cancelled), and a restart in between seals them as it
// seals any child it interrupts. A context that can never end (a call made
// outside gRPC) holds nothing.
func afterAnswer(rpc context.Context, wf messages.Workflow) messages.Workflow {
	answered := rpc.Done()
	if answered == nil {
		return wf
	}
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		select {
		case <-answered:
		case <-ctx.Done():
		}
		wf.Run(ctx, job)
	})
}
