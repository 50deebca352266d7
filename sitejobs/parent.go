package sitejobs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// parent answers a cluster parent (a batch split over racks, recorded in
// the store): its snapshot aggregated from each rack's batch as the
// rack's owner answers it now, by the registry's own rule
// (actors.AggregateBatch), followed, with includeChildren, by every node's
// child, rack by rack. It is what GetJobStatus answers for the parent
// through any member (grpc/forward).
func (s *Site) parent(ctx context.Context, id string, includeChildren bool) ([]messages.JobSnapshot, error) {
	p, err := s.cfg.Store.ClusterParent(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, fmt.Errorf("job %s: %w", id, messages.ErrJobNotFound)
	case err != nil:
		return nil, fmt.Errorf("sitejobs: read job %s: %w", id, err)
	}
	batches := make([][]messages.JobSnapshot, len(p.Racks))
	errs := make([]error, len(p.Racks))
	var wg sync.WaitGroup
	for i, rk := range p.Racks {
		if rk.JobID == "" {
			continue
		}
		wg.Go(func() { batches[i], errs[i] = s.get(ctx, rk.RackID, rk.JobID, true) })
	}
	wg.Wait()
	t := jobTypeNamed(p.Type)
	parent := messages.JobSnapshot{ID: p.ID, Type: t, CreatedAt: p.CreatedAt, UpdatedAt: p.CreatedAt}
	var children []messages.JobSnapshot
	var notStarted []string
	missing := 0
	for i, rk := range p.Racks {
		switch {
		case rk.JobID == "":
			notStarted = append(notStarted, "rack "+rk.RackID+": "+rk.Failure)
			continue
		case errors.Is(errs[i], messages.ErrJobNotFound) || errs[i] == nil && len(batches[i]) == 0:
			missing++ // the rack's batch is gone (retention)
			continue
		case errs[i] != nil:
			return nil, errs[i]
		}
		rackBatch := batches[i][0]
		if rackBatch.UpdatedAt.After(parent.UpdatedAt) {
			parent.UpdatedAt = rackBatch.UpdatedAt
		}
		if len(batches[i]) == 1 && rackBatch.IsTerminal() {
			notStarted = append(notStarted, "rack "+rk.RackID+": "+rackBatch.ErrorMessage)
		}
		children = append(children, batches[i][1:]...)
	}
	if len(children) == 0 && missing == 0 {
		out := messages.Failed(messages.NewFailure(messages.ErrorInvalidArgument,
			fmt.Sprintf("No %s was started: %s", t.BatchNoun(), strings.Join(notStarted, "; "))))
		parent.State, parent.Description, parent.ErrorCode, parent.ErrorMessage, parent.ResultJSON =
			out.State, out.Description, out.Code, out.Message, out.ResultJSON
		return []messages.JobSnapshot{parent}, nil
	}
	parent = actors.AggregateBatch(parent, t, children, missing)
	parent.ChildIDs = make([]string, len(children))
	for i, c := range children {
		parent.ChildIDs[i] = c.ID
	}
	if !includeChildren {
		return []messages.JobSnapshot{parent}, nil
	}
	return append([]messages.JobSnapshot{parent}, children...), nil
}

// jobTypeNamed is the job type whose name is name (TypeNone when none
// is).
func jobTypeNamed(name string) messages.JobType {
	for t := messages.TypeNone; t <= messages.TypeSystemValidation; t++ {
		if t.String() == name {
			return t
		}
	}
	return messages.TypeNone
}
