package forward

import (
	"context"

	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/store"
)

// Cluster delivers a Forward to the member that owns its rack (the grain
// rack/<fwd.RackId>, which answers it with Serve) and returns that
// member's answer. An error means the owner was not reached or did not
// answer before ctx ended; a call the owner answered, even with an error
// status, comes back as a ForwardReply.
type Cluster interface {
	Forward(ctx context.Context, fwd *rackpb.Forward) (*rackpb.ForwardReply, error)
}

// JobRacks finds the rack a job belongs to (store.RackOwners.JobRack):
// store.ErrNotFound for a job the store does not know. A job's rack never
// changes.
type JobRacks interface {
	JobRack(ctx context.Context, jobID string) (rackID string, err error)
}

// Store is what the receiving side asks of the shared store: each job's
// rack and the cluster parents.
type Store interface {
	JobRacks
	store.ClusterParents
}
