package coldreboot

import (
	"context"

	"github.com/rmsd/rmsd/messages"
)

// Hold is the workflow of a node reservation: it keeps its node busy for the
// job engine until release is closed (or the job is cancelled), then
// completes. A cold reboot holds every node of the rack this way, so no
// other job can touch them while the runbook runs.
func Hold(coordinatorID string, release <-chan struct{}) messages.Workflow {
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("Reserved by cold reboot job " + coordinatorID)
		select {
		case <-release:
		case <-ctx.Done():
		}
		_ = job.Complete("cold reboot reservation released", `{"status":"completed"}`)
	})
}

// SentinelNode is the node id of the coordinator job: one per rack, so the
// job engine refuses a second cold reboot of the same rack.
func SentinelNode(rackID string) string { return rackID + ":cold-reboot" }
