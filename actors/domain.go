package actors

import (
	"fmt"

	"github.com/rmsd/rmsd/messages"
)

// Exclusion follows the hardware, not only the names callers use. Besides
// its (rack, node) key, a held node holds its devices (the canonical BMC
// and switch-host keys the gRPC layer sends, hw.Node.DeviceKeys): a node
// naming a held device under another key is refused, naming the holder.
// And a rack key is the rack's power domain: the power shelves feed every
// tray, so an operation that can cut their output holds it. The domain is
// granted only while no node of the rack is held by anyone else, and while
// it is held no job or lease is granted on any node of the rack.
//
// Device keys are not journaled with a job's own node (that hold is
// implied by its JobCreated, and the row leaves it out): after a replay
// the registry's first turn seals every job that was not terminal and
// releases its holds before it admits anything, so no device hold that a
// replay could have lost is ever consulted. A journal snapshot carries
// them anyway (NodeLocked.Devices), as the lease had them.

// index records a new lease's devices and counts its node in its rack.
func (s *jobStore) index(l *lease) {
	if l.key.node == "" {
		return
	}
	s.rackNodes[l.key.rack]++
	for _, d := range l.devices {
		if _, held := s.devices[d]; !held {
			s.devices[d] = l.key
		}
	}
}

// unindex undoes index for a released lease.
func (s *jobStore) unindex(l *lease) {
	if l.key.node == "" {
		return
	}
	if s.rackNodes[l.key.rack]--; s.rackNodes[l.key.rack] <= 0 {
		delete(s.rackNodes, l.key.rack)
	}
	for _, d := range l.devices {
		if s.devices[d] == l.key {
			delete(s.devices, d)
		}
	}
}

// deviceBusy returns the refusal for a node whose devices are held under
// another key, naming that holder; nil when none is.
func (r *registry) deviceBusy(k lockKey, devices []string) *messages.RefusedError {
	for _, d := range devices {
		hk, ok := r.store.devices[d]
		if !ok || hk == k {
			continue
		}
		if l, ok := r.store.leases[hk]; ok {
			return r.heldRefusal(l)
		}
	}
	return nil
}

// nodeBusy returns the refusal for holding node k with its devices: the
// key held, one of its devices held under another key, or its rack's
// power domain held (unless own, the domains this same request takes).
func (r *registry) nodeBusy(k lockKey, devices []string, own map[string]bool) *messages.RefusedError {
	if ref := r.busy(k); ref != nil {
		return ref
	}
	if ref := r.deviceBusy(k, devices); ref != nil {
		return ref
	}
	if own[k.rack] {
		return nil
	}
	return r.busy(lockKey{k.rack, ""})
}

// domainBusy returns the refusal for taking rack's power domain: the rack
// itself held, or any node of it, naming the holder (of the nodes, the
// first by node id).
func (r *registry) domainBusy(rack string) *messages.RefusedError {
	if ref := r.busy(lockKey{rack, ""}); ref != nil {
		return ref
	}
	if r.store.rackNodes[rack] == 0 {
		return nil
	}
	var first *lease
	for k, l := range r.store.leases {
		if k.rack == rack && k.node != "" && (first == nil || k.node < first.key.node) {
			first = l
		}
	}
	if first == nil { // the count and the leases disagree: trust the leases
		return nil
	}
	return r.heldRefusal(first)
}

// claims are the nodes and devices one request asks for: a node named
// twice, or a device named under two keys, is refused.
type claims struct {
	keys    map[lockKey]bool
	devices map[string]lockKey
}

func newClaims() *claims {
	return &claims{keys: map[lockKey]bool{}, devices: map[string]lockKey{}}
}

// conflict returns the refusal for claiming k with devices, nil when
// neither was claimed before under another key.
func (c *claims) conflict(k lockKey, devices []string) *messages.RefusedError {
	if c.keys[k] {
		return duplicateTargetRefusal(k)
	}
	for _, d := range devices {
		if o, ok := c.devices[d]; ok && o != k {
			return refuse(messages.ErrDuplicateTarget, messages.ErrorInvalidArgument,
				fmt.Sprintf("rack %s node %s names the device (%s) of rack %s node %s, also in this request", k.rack, k.node, d, o.rack, o.node))
		}
	}
	return nil
}

// add records k and its devices as claimed.
func (c *claims) add(k lockKey, devices []string) {
	c.keys[k] = true
	for _, d := range devices {
		if _, ok := c.devices[d]; !ok {
			c.devices[d] = k
		}
	}
}
