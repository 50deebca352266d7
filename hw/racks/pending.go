package racks

import (
	"github.com/rmsd/rmsd/hw"
)

// A change is written through the observer (the store) without the
// registry's lock, so that a slow or stalled store never stalls a look-up.
// It is checked and reserved under the lock first: while it is written,
// its node is pending (another change of it is refused as in progress),
// the device keys it takes are reserved (another node cannot take them),
// and a rack it creates has its family reserved. Once the observer has
// answered, the lock is taken again and the change is applied, or, when
// the observer refused it, only its reservation is dropped. Look-ups see
// a change only once it is applied.

// change is one node change being written through the observer.
type change struct {
	ref  hw.Ref
	node *hw.Node // nil: a deletion
	keys []string // the node's device keys once applied (creates, updates)
	// newRack: a create whose rack is not registered yet.
	newRack bool
}

// pendingRack is a rack that pending creates would register.
type pendingRack struct {
	family hw.ProductFamily
	count  int
}

// inProgress refuses a change of ref while another is being written.
func (r *Registry) inProgress(ref hw.Ref) error {
	if r.pending[ref] == nil {
		return nil
	}
	return refuse(ErrConflict, "a change of node %s of rack %s is in progress (being written to the node store); retry once it ends",
		ref.NodeID, ref.RackID)
}

// familyOf returns the product family of a rack, registered or about to
// be.
func (r *Registry) familyOf(rackID string) (hw.ProductFamily, bool) {
	if rk := r.racks[rackID]; rk != nil {
		return rk.family, true
	}
	if p := r.newRacks[rackID]; p != nil {
		return p.family, true
	}
	return "", false
}

// reserve marks c pending. The caller holds r.mu.
func (r *Registry) reserve(c *change) {
	r.pending[c.ref] = c
	for _, k := range c.keys {
		r.reserved[k] = c.ref
	}
	if c.newRack {
		p := r.newRacks[c.ref.RackID]
		if p == nil {
			p = &pendingRack{family: c.node.Type.Family()}
			r.newRacks[c.ref.RackID] = p
		}
		p.count++
	}
}

// settle drops c's reservation and, when its write succeeded, applies
// it. The caller holds r.mu.
func (r *Registry) settle(c *change, written bool) {
	delete(r.pending, c.ref)
	for _, k := range c.keys {
		if r.reserved[k] == c.ref {
			delete(r.reserved, k)
		}
	}
	if c.newRack {
		if p := r.newRacks[c.ref.RackID]; p != nil {
			if p.count--; p.count == 0 {
				delete(r.newRacks, c.ref.RackID)
			}
		}
	}
	if !written {
		return
	}
	if c.node == nil {
		if rk := r.racks[c.ref.RackID]; rk != nil {
			delete(rk.nodes, c.ref.NodeID)
		}
		r.indexDevices(c.ref, nil)
		return
	}
	rk := r.racks[c.ref.RackID]
	if rk == nil {
		rk = &rack{family: c.node.Type.Family(), nodes: map[string]hw.Node{}}
		r.racks[c.ref.RackID] = rk
	}
	rk.nodes[c.ref.NodeID] = *c.node
	r.indexDevices(c.ref, c.keys)
}
