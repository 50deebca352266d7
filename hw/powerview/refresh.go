package powerview

import (
	"context"
	"time"

	"github.com/rmsd/rmsd/hw"
)

// Refresher reads the power state of nodes in the background, one node at
// a time, so the view stays current without anyone asking.
type Refresher struct {
	// Every is the pause between two rounds over the nodes.
	Every time.Duration
	// Timeout bounds one node's read.
	Timeout time.Duration
	// Nodes lists the nodes of a round.
	Nodes func() []hw.Node
	// Skip, when set, leaves a node out of the round (one a job holds:
	// its workflow owns the device).
	Skip func(ctx context.Context) func(hw.Node) bool
	// Read reads one node's power state; the adapters report it to the
	// view (platform.Deps.PowerSeen). Its error is the node's own.
	Read func(ctx context.Context, n hw.Node) error
}

// Run refreshes until ctx ends: a round every Every, the first one Every
// after the start (rmsd's own reads come first). At most one read is in
// flight at any time.
func (r Refresher) Run(ctx context.Context) {
	t := time.NewTimer(r.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		r.round(ctx)
		t.Reset(r.Every)
	}
}

func (r Refresher) round(ctx context.Context) {
	skip := func(hw.Node) bool { return false }
	if r.Skip != nil {
		skip = r.Skip(ctx)
	}
	for _, n := range r.Nodes() {
		if ctx.Err() != nil {
			return
		}
		if skip(n) {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, r.Timeout)
		_ = r.Read(rctx, n) // a failed read is recorded Unknown by the adapter
		cancel()
	}
}
