package rmsserver

import (
	"context"
	"errors"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// Bounds of the job-engine leases a synchronous operation takes.
const (
	// leaseTTL is how long a lease lives if its release is lost: twice
	// the time its operation gets (opShare), which is itself longer than
	// any synchronous hardware operation (a power shelf is about ten BMC
	// requests of at most 30 s each).
	leaseTTL = 10 * time.Minute
	// opShare is the part of the lease's TTL its operation may run: the
	// operation's context ends at half the TTL, measured from before the
	// lease is asked for, so it is cancelled long before the lease could
	// lapse, and the lease is released only once the operation returned.
	opShare = 2
	// releaseTimeout bounds giving a lease back once the RPC is done (or
	// its caller gone).
	releaseTimeout = 5 * time.Second
)

// heldLease is a lease taken for one RPC.
type heldLease struct {
	// ctx is the context the leased operation must run under: the RPC's,
	// ending at the latest half-way through the lease's TTL, and naming
	// the lease as the holder of its hardware requests (hw.HolderHeader).
	ctx context.Context
	// err is set when the lease was refused as a whole (a rack, or any
	// node of an all-or-nothing lease, is busy).
	err error
	// refused is aligned with the nodes leased (those of the request,
	// then those built from nodes): the reason a node was refused, nil
	// where it was granted.
	refused []error
	release func()
}

// lease asks the job engine to hold racks and nodes for a synchronous
// operation. A refusal is in the result, for the RPC to report in-band; an
// error means the engine could not be asked and is already a gRPC status.
// release must always be called, once the operation has returned: the
// operation runs under the result's ctx.
func (m *rackManager) lease(ctx context.Context, operation string, racks []string, nodes []hw.Node, partial bool) (heldLease, error) {
	return m.leaseWith(ctx, messages.AcquireLease{Operation: operation, Racks: racks, Partial: partial}, nodes, nil)
}

// leaseWith is lease for a request built by the caller (its nodes are
// filled from nodes, with their device keys). A node for which domain
// (when not nil) is true also asks for its rack's power domain.
func (m *rackManager) leaseWith(ctx context.Context, req messages.AcquireLease, nodes []hw.Node, domain func(hw.Node) bool) (heldLease, error) {
	ttl := m.deps.LeaseTTL
	if ttl <= 0 {
		ttl = leaseTTL
	}
	// Before the request: the registry's expiry is later than start + ttl.
	start := time.Now()
	req.TTL, req.ID = ttl, "lease-"+newJobID()
	operation := req.Operation
	for i, ref := range nodeRefs(ctx, nodes) {
		ref.PowerDomain = domain != nil && domain(nodes[i])
		req.Nodes = append(req.Nodes, ref)
	}
	opCtx, cancel := context.WithDeadline(ctx, start.Add(ttl/opShare))
	release := func() {
		cancel()
		rctx, done := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer done()
		if err := m.deps.Jobs.Release(rctx, req.ID); err != nil {
			m.log.Warn().Str("operation", operation).Err(loggedErr(err)).Msg("release of a job-engine lease failed; it lapses on its own")
		}
	}
	rep, err := m.deps.Jobs.Lease(ctx, req)
	if err != nil {
		release() // the lease may have been granted before the answer was lost
		return heldLease{ctx: opCtx, release: func() {}}, engineError(err)
	}
	out := heldLease{ctx: hw.WithHolder(opCtx, req.ID), err: rep.Err, refused: make([]error, len(req.Nodes)), release: release}
	for i, r := range rep.Refused {
		if r != nil {
			out.refused[i] = r
		}
	}
	var refused *messages.RefusedError
	if out.err != nil && !errors.As(out.err, &refused) {
		release()
		return heldLease{ctx: opCtx, release: func() {}}, engineError(out.err)
	}
	return out, nil
}
