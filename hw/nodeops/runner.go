package nodeops

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
)

// ErrNoManagementEndpoint is returned for a node that carries neither a BMC
// nor a host endpoint to reach it by.
var ErrNoManagementEndpoint = errors.New("nodeops: node has no bmc_endpoint or host_endpoint")

// Op is one operation on the platform adapter of nodes[i] of a batch.
type Op func(ctx context.Context, i int, d platform.Device) error

// Runner runs Ops on nodes. It is safe for concurrent use; its zero value is
// not usable.
type Runner struct {
	deps     platform.Deps
	slots    chan struct{}
	gates    gates
	adapters *adapters
	// queued counts operations waiting for their device's gate or a slot.
	queued atomic.Int64
}

// New returns a Runner building adapters from deps and running at most
// maxConcurrent operations at once across all batches. It keeps the
// adapters it builds, up to DefaultMaxAdapters, and hands a node's
// operations the same adapter for as long as the node's configuration
// (as the operation names it) does not change.
func New(deps platform.Deps, maxConcurrent int) *Runner {
	if maxConcurrent < 1 {
		maxConcurrent = 1
	}
	return &Runner{deps: deps, slots: make(chan struct{}, maxConcurrent), gates: gates{held: map[string]*gate{}},
		adapters: newAdapters(DefaultMaxAdapters)}
}

// One runs op on one node.
func (r *Runner) One(ctx context.Context, n hw.Node, op Op) error {
	return r.Each(ctx, []hw.Node{n}, op)[0]
}

// Each runs op once per node and returns one error per node, in order. It
// returns when every operation has ended; a cancelled ctx fails the
// operations that had not started yet. A panic in op becomes that node's
// error.
func (r *Runner) Each(ctx context.Context, nodes []hw.Node, op Op) []error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = r.run(ctx, i, nodes[i], op)
		}(i)
	}
	wg.Wait()
	return errs
}

// Load returns the operations running now (each holding one of the
// global slots) and those waiting for their device or a slot.
func (r *Runner) Load() (inFlight, queued int) {
	return len(r.slots), int(r.queued.Load())
}

// ErrPanic marks an operation that panicked.
var ErrPanic = errors.New("nodeops: operation panicked")

// run takes the node's device gate first and only then one of the global
// slots: requests queued behind a slow or hung device wait without holding
// a slot, so they cannot starve every other device.
func (r *Runner) run(ctx context.Context, i int, n hw.Node, op Op) (err error) {
	cfg := platform.Config{ID: n.ID, RackID: n.RackID, Type: n.Type}
	if n.BMC != nil {
		cfg.BMC = *n.BMC
	}
	if n.Host != nil {
		cfg.Host = *n.Host
	}
	key := gateKey(cfg)
	if key == "" {
		return ErrNoManagementEndpoint
	}
	// A select between a free gate and a done context picks either at
	// random: check the context first so a cancelled batch starts nothing.
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("node %s: %w", n.ID, err)
	}
	r.queued.Add(1)
	gt, err := r.gates.acquire(ctx, key)
	if err != nil {
		r.queued.Add(-1)
		return fmt.Errorf("node %s: %w", n.ID, err)
	}
	select {
	case r.slots <- struct{}{}:
		r.queued.Add(-1)
	case <-ctx.Done():
		r.queued.Add(-1)
		r.gates.release(key, gt)
		return fmt.Errorf("node %s: %w", n.ID, ctx.Err())
	}
	// One deferred call, in this order: a panic becomes the node's error,
	// then the slot and the device's gate are given back.
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("node %s: %w: %v", n.ID, ErrPanic, p)
		}
		<-r.slots
		r.gates.release(key, gt)
	}()
	d, err := r.adapters.get(r.deps, key, cfg)
	if err != nil {
		return err
	}
	return op(ctx, i, d)
}

// gateKey is the address whose requests are serialised: the BMC, or the
// NVOS host of a switch without a BMC.
func gateKey(c platform.Config) string {
	switch {
	case c.BMC.Host() != "":
		return c.BMC.Addr(443)
	case c.Host.Host() != "":
		return c.Host.Addr(443)
	default:
		return ""
	}
}
