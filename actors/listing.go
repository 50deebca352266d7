package actors

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/rmsd/rmsd/messages"
)

// listJobs asks the registry for the jobs a filter selects.
type listJobs struct{ filter messages.JobFilter }

type listJobsReply struct{ jobs []messages.JobSnapshot }

// listHolds asks the registry for every lease it keeps.
type listHolds struct{}

type listHoldsReply struct{ holds []messages.Hold }

// listJobs copies the jobs f selects; the caller sorts them, off the
// registry's turn.
func (r *registry) listJobs(f messages.JobFilter) *listJobsReply {
	out := make([]messages.JobSnapshot, 0, len(r.store.jobs))
	for _, rec := range r.store.jobs {
		if rec.snap.ParentID != "" && !f.Children {
			continue
		}
		out = append(out, rec.snap)
	}
	return &listJobsReply{jobs: out}
}

// listHolds answers every lease, by rack and node.
func (r *registry) listHolds() *listHoldsReply {
	out := make([]messages.Hold, 0, len(r.store.leases))
	for k, l := range r.store.leases {
		out = append(out, messages.Hold{RackID: k.rack, NodeID: k.node, Holder: l.holder, Job: r.topJob(l.holder),
			Operation: l.operation, Since: l.since})
	}
	slices.SortFunc(out, func(a, b messages.Hold) int {
		return cmp.Or(cmp.Compare(a.RackID, b.RackID), cmp.Compare(a.NodeID, b.NodeID))
	})
	return &listHoldsReply{holds: out}
}

// List returns the jobs of the index that f selects, newest first. It
// reads the registry's memory: terminal jobs stay listed until the TTL or
// the capacity evicts them.
func (e *Engine) List(ctx context.Context, f messages.JobFilter) ([]messages.JobSnapshot, error) {
	res, err := e.ask(ctx, &listJobs{filter: f})
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	out := res.(*listJobsReply).jobs
	slices.SortFunc(out, func(a, b messages.JobSnapshot) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Holds returns every node and rack lease the registry keeps, with the
// job (or operation) holding it.
func (e *Engine) Holds(ctx context.Context) ([]messages.Hold, error) {
	res, err := e.ask(ctx, &listHolds{})
	if err != nil {
		return nil, fmt.Errorf("list holds: %w", err)
	}
	return res.(*listHoldsReply).holds, nil
}
