package racks

import (
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// A device is registered once. Each node's BMC and switch host have a
// canonical key (hw.Node.DeviceKeys: the resolved address and port); a node
// whose device is already registered under another (rack, node) is
// refused naming it, so the job engine's exclusion by name cannot be
// bypassed by registering one BMC twice. Keys are resolved before the
// registry's lock is taken.

// deviceTaken refuses ref's keys when another node has one of them, or is
// being registered with one (pending.go).
func (r *Registry) deviceTaken(ref hw.Ref, keys []string) error {
	for _, k := range keys {
		kind, addr, _ := strings.Cut(k, " ")
		if owner, ok := r.devices[k]; ok && owner != ref {
			return refuse(ErrConflict, "%s endpoint %s is already registered as node %s of rack %s",
				kind, addr, owner.NodeID, owner.RackID)
		}
		if owner, ok := r.reserved[k]; ok && owner != ref {
			return refuse(ErrConflict, "%s endpoint %s is being registered as node %s of rack %s (in progress)",
				kind, addr, owner.NodeID, owner.RackID)
		}
	}
	return nil
}

// indexDevices makes keys ref's registered device keys (nil: none, the
// node is gone).
func (r *Registry) indexDevices(ref hw.Ref, keys []string) {
	for _, k := range r.keys[ref] {
		if r.devices[k] == ref {
			delete(r.devices, k)
		}
	}
	if len(keys) == 0 {
		delete(r.keys, ref)
		return
	}
	r.keys[ref] = keys
	for _, k := range keys {
		r.devices[k] = ref
	}
}

// updatedKeys returns ref's device keys after an update that replaces its
// BMC (when bmcGiven) and host (when hostGiven) endpoints; the endpoints
// it does not replace keep their keys.
func (r *Registry) updatedKeys(ref hw.Ref, bmcGiven bool, bmcKey string, hostGiven bool, hostKey string) []string {
	var out []string
	for _, k := range r.keys[ref] {
		isBMC := strings.HasPrefix(k, "bmc ")
		if (isBMC && !bmcGiven) || (!isBMC && !hostGiven) {
			out = append(out, k)
		}
	}
	for _, k := range []string{bmcKey, hostKey} {
		if k != "" {
			out = append(out, k)
		}
	}
	return out
}
