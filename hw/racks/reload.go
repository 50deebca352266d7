package racks

import (
	"context"

	"github.com/rmsd/rmsd/hw"
)

// ReloadRack makes rackID's nodes exactly nodes, as the store has them: a
// cluster member takes in the changes another member made to a rack (the
// rack's owner writes its node changes; every member reloads the rack
// from the store). The observer is not told, since the nodes come from
// the store. A node whose device is registered under another rack is left
// out, with its error at its index; a node with a change of this
// registry's own in progress keeps that change's outcome.
func (r *Registry) ReloadRack(rackID string, family hw.ProductFamily, nodes []hw.Node) []error {
	keys := hw.DeviceKeysOf(context.Background(), r.resolver, nodes)
	errs := make([]error, len(nodes))
	r.mu.Lock()
	defer r.mu.Unlock()
	rk, ok := r.racks[rackID]
	if !ok {
		rk = &rack{family: family, nodes: map[string]hw.Node{}}
		r.racks[rackID] = rk
	}
	keep := map[string]bool{}
	for i, n := range nodes {
		ref := hw.Ref{RackID: rackID, NodeID: n.ID}
		keep[n.ID] = true
		if r.pending[ref] != nil {
			continue
		}
		if err := r.deviceTakenElsewhere(ref, keys[i]); err != nil {
			errs[i] = err
			continue
		}
		rk.nodes[n.ID] = n
		r.indexDevices(ref, keys[i])
	}
	for id := range rk.nodes {
		ref := hw.Ref{RackID: rackID, NodeID: id}
		if !keep[id] && r.pending[ref] == nil {
			delete(rk.nodes, id)
			r.indexDevices(ref, nil)
		}
	}
	return errs
}

// deviceTakenElsewhere is deviceTaken for a reload: a key held by another
// node of the same rack is not a conflict (the reload may move a device
// from one node of the rack to another).
func (r *Registry) deviceTakenElsewhere(ref hw.Ref, keys []string) error {
	var others []string
	for _, k := range keys {
		if owner, ok := r.devices[k]; ok && owner.RackID == ref.RackID {
			continue
		}
		others = append(others, k)
	}
	return r.deviceTaken(ref, others)
}
