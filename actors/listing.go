package actors

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/rmsd/rmsd/messages"
)

// listHolds asks the registry for every lease it keeps.
type listHolds struct{}

type listHoldsReply struct{ holds []messages.Hold }

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

// Holds returns every node and rack lease the registry keeps, with the
// job (or operation) holding it.
func (e *Engine) Holds(ctx context.Context) ([]messages.Hold, error) {
	res, err := e.ask(ctx, &listHolds{})
	if err != nil {
		return nil, fmt.Errorf("list holds: %w", err)
	}
	return res.(*listHoldsReply).holds, nil
}
