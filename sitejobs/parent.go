package sitejobs

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/rmsd/rmsd/clusterparent"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// parent answers a cluster parent (a batch split over racks, recorded in
// the store): its snapshot aggregated from each rack's batch as the
// rack's owner answers it now (clusterparent.Aggregate), followed, with
// includeChildren, by every node's child, rack by rack. It is what
// GetJobStatus answers for the parent through any member (grpc/forward).
func (s *Site) parent(ctx context.Context, id string, includeChildren bool) ([]messages.JobSnapshot, error) {
	p, err := s.cfg.Store.ClusterParent(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("job %s: %w", id, messages.ErrJobNotFound)
	case err != nil:
		return nil, fmt.Errorf("sitejobs: read job %s: %w", id, err)
	}
	return s.aggregate(ctx, p, includeChildren)
}

// aggregate reads each rack's batch of p from its owner, at once, and
// returns p's aggregated snapshot, followed by its children with
// includeChildren.
func (s *Site) aggregate(ctx context.Context, p store.ClusterParent, includeChildren bool) ([]messages.JobSnapshot, error) {
	batches := make([]clusterparent.RackBatch, len(p.Racks))
	var wg sync.WaitGroup
	for i, rk := range p.Racks {
		if rk.JobID == "" {
			continue
		}
		wg.Go(func() { batches[i].Jobs, batches[i].Err = s.get(ctx, rk.RackID, rk.JobID, true) })
	}
	wg.Wait()
	snaps, err := clusterparent.Aggregate(p, batches)
	if err != nil || includeChildren {
		return snaps, err
	}
	return snaps[:1], nil
}
