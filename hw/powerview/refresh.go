package powerview

import (
	"context"
	"time"

	"github.com/rmsd/rmsd/hw"
)

// Refresher reads nodes in the background, one node at a time, so the
// view stays current without anyone asking: the power state of every node
// a round every Every, and the firmware inventory of each node Stale
// names, as soon as it is marked.
type Refresher struct {
	// Every is the pause between two rounds over the nodes; 0 runs no
	// rounds (only the Stale reads).
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
	// Stale, when set, names the nodes whose firmware inventory
	// ReadFirmware reads again, each once, before the round's next node.
	// A marked node is read even when a job holds it again: the read is
	// a query, queued behind the job's own requests to the device.
	Stale *Stale
	// ReadFirmware reads one node's firmware inventory and records it in
	// the view (View.SetFirmware). Its error is the node's own: the view
	// keeps what it last read.
	ReadFirmware func(ctx context.Context, n hw.Node) error
}

// Run refreshes until ctx ends: a round every Every, the first one Every
// after the start (rmsd's own reads come first), and the Stale nodes as
// they are marked. At most one read is in flight at any time.
func (r Refresher) Run(ctx context.Context) {
	var tick <-chan time.Time
	var t *time.Timer
	if r.Every > 0 {
		t = time.NewTimer(r.Every)
		defer t.Stop()
		tick = t.C
	}
	var wake <-chan struct{}
	if r.Stale != nil {
		wake = r.Stale.wake
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			r.rereads(ctx)
		case <-tick:
			r.round(ctx)
			t.Reset(r.Every)
		}
	}
}

func (r Refresher) round(ctx context.Context) {
	skip := func(hw.Node) bool { return false }
	if r.Skip != nil {
		skip = r.Skip(ctx)
	}
	for _, n := range r.Nodes() {
		r.rereads(ctx) // a finished firmware job does not wait for the round
		if ctx.Err() != nil {
			return
		}
		if skip(n) {
			continue
		}
		r.read(ctx, n, r.Read) // a failed read is recorded Unknown by the adapter
	}
}

// rereads reads the firmware of every node Stale names, until it is
// empty.
func (r Refresher) rereads(ctx context.Context) {
	if r.Stale == nil {
		return
	}
	for ctx.Err() == nil {
		n, ok := r.Stale.next()
		if !ok {
			return
		}
		r.read(ctx, n, r.ReadFirmware)
	}
}

// read runs one bounded read of n.
func (r Refresher) read(ctx context.Context, n hw.Node, read func(context.Context, hw.Node) error) {
	rctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	_ = read(rctx, n)
}
