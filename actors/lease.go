package actors

import (
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// defaultLeaseTTL bounds an operation's lease when the request names none.
const defaultLeaseTTL = 10 * time.Minute

// acquireLease grants an operation's lease: racks (power domains) all or
// nothing, nodes (with their devices, and the domain a node asks for) all
// or nothing unless Partial. A retried request is answered as the first.
func (r *registry) acquireLease(ctx actor.Context, m *messages.AcquireLease) *messages.AcquireLeaseReply {
	s := r.store
	if op, ok := s.ops[m.ID]; ok {
		return &messages.AcquireLeaseReply{Refused: op.refused, Err: op.err}
	}
	if s.closing {
		return &messages.AcquireLeaseReply{Err: messages.ErrEngineClosed}
	}
	var rackErr error
	own := make(map[string]bool, len(m.Racks))
	for _, rack := range m.Racks {
		own[rack] = true
		if ref := r.domainBusy(rack); ref != nil && rackErr == nil {
			rackErr = ref
		}
	}
	for _, rack := range m.RacksFree {
		if ref := r.busy(lockKey{rack, ""}); ref != nil && rackErr == nil {
			rackErr = ref
		}
	}
	refused := make([]*messages.RefusedError, len(m.Nodes))
	claimed := newClaims()
	domains := slices.Clone(m.Racks)
	var firstNode error
	for i, n := range m.Nodes {
		k := lockKey{n.RackID, n.NodeID}
		switch {
		case n.NodeID == "":
			refused[i] = refuse(messages.ErrInvalidSpec, messages.ErrorInvalidArgument, "node_id is empty")
		default:
			refused[i] = claimed.conflict(k, n.Devices)
			if refused[i] == nil {
				refused[i] = r.nodeBusy(k, n.Devices, own)
			}
			if refused[i] == nil && n.PowerDomain && !own[n.RackID] {
				if refused[i] = r.domainBusy(n.RackID); refused[i] == nil {
					own[n.RackID] = true
					domains = append(domains, n.RackID)
				}
			}
		}
		claimed.add(k, n.Devices)
		if refused[i] != nil && firstNode == nil {
			firstNode = refused[i]
		}
	}
	err := rackErr
	if err == nil && !m.Partial {
		err = firstNode
	}
	op := &opLease{refused: refused, err: err}
	ttl := m.TTL
	if ttl <= 0 {
		ttl = defaultLeaseTTL
	}
	now := r.core.now()
	op.expires = now.Add(ttl)
	s.ops[m.ID] = op
	if err != nil {
		return &messages.AcquireLeaseReply{Refused: refused, Err: err}
	}
	var evs []messages.Event
	for _, rack := range domains {
		evs = append(evs, messages.NodeLocked{RackID: rack, Holder: m.ID, Operation: m.Operation, Since: now, Expires: op.expires})
	}
	for i, n := range m.Nodes {
		if refused[i] == nil {
			evs = append(evs, messages.NodeLocked{RackID: n.RackID, NodeID: n.NodeID, Holder: m.ID, Operation: m.Operation, Since: now, Expires: op.expires, Devices: n.Devices})
		}
	}
	r.applyAll(ctx, evs)
	for _, k := range op.keys {
		r.spawnLock(ctx, s.leases[k])
	}
	return &messages.AcquireLeaseReply{Refused: refused}
}

// releaseLease gives back every hold of an operation's lease.
func (r *registry) releaseLease(ctx actor.Context, id string) {
	op, ok := r.store.ops[id]
	if !ok {
		return
	}
	r.releaseKeys(ctx, id, op.keys)
	delete(r.store.ops, id)
}

func (r *registry) releaseKeys(ctx actor.Context, holder string, keys []lockKey) {
	var evs []messages.Event
	var ls []*lease
	for _, k := range keys {
		if l, ok := r.store.leases[k]; ok && l.holder == holder {
			ls = append(ls, l)
			evs = append(evs, messages.NodeReleased{RackID: k.rack, NodeID: k.node, Holder: holder})
		}
	}
	r.applyAll(ctx, evs)
	for _, l := range ls {
		r.stopLock(ctx, l)
	}
}

// expireLease ends an operation's hold on k that outlived its TTL: its
// holder is gone or stuck, and the node must not stay held for ever.
func (r *registry) expireLease(ctx actor.Context, k lockKey, holder string) {
	l, ok := r.store.leases[k]
	if !ok || l.holder != holder || l.isJob() {
		return
	}
	r.core.log.Warn().Str("rack_id", k.rack).Str("node_id", k.node).Str("operation", l.operation).
		Time("since", l.since).Msg("operation lease expired without being released")
	r.releaseKeys(ctx, holder, []lockKey{k})
	if op, ok := r.store.ops[holder]; ok && len(op.keys) == 0 {
		delete(r.store.ops, holder)
	}
}

// holderGone handles the end of the actor a job's lease was watching: the
// job's own worker, or its parent's for a reservation child.
func (r *registry) holderGone(ctx actor.Context, k lockKey, holder string) {
	rec, ok := r.store.jobs[holder]
	if !ok {
		return
	}
	if rec.reservation {
		r.checkAbandoned(ctx, rec.snap.ParentID)
		return
	}
	r.checkAbandoned(ctx, holder)
}

// stopLock stops the NodeLock actor of a released lease.
func (r *registry) stopLock(ctx actor.Context, l *lease) {
	if l.lock == nil {
		return
	}
	r.forget(l.lock)
	ctx.Stop(l.lock)
	l.lock = nil
}
