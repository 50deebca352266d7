package console

import (
	"context"
	"errors"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/messages"
)

// Jobs is what the console reads of the jobs: a single rmsd's job engine
// (*actors.Engine), or in cluster mode the whole site's jobs as every
// rack's owner answers them (*sitejobs.Site).
type Jobs interface {
	// List answers the jobs, newest first.
	List(ctx context.Context, q messages.ListJobs) (messages.ListJobsReply, error)
	// Get answers a job, with its children after it.
	Get(ctx context.Context, id string, includeChildren bool) ([]messages.JobSnapshot, error)
	// Holds answers the nodes and power domains held.
	Holds(ctx context.Context) ([]messages.Hold, error)
	// Subscribe follows the changes (the job engine's change feed).
	Subscribe(buffer int) *actors.Subscription
}

// unreachable is an error of a read over several racks some of whose
// owners did not answer: the others' answer came with it.
type unreachable interface {
	Unreachable() []string
}

// partly tells apart a read that answered in part (the racks not read,
// and a nil error: the page is drawn with what answered, naming them)
// from one that failed.
func partly(err error) ([]string, error) {
	var u unreachable
	if errors.As(err, &u) {
		return u.Unreachable(), nil
	}
	return nil, err
}
