package racks

import "slices"

// RacksOf maps each of the node ids to the racks that register a node with
// that id, sorted (a node id may repeat across racks); an id no rack
// registers is absent. It copies no node, so authorization can place the
// nodes a request names without their rack cheaply.
func (r *Registry) RacksOf(nodeIDs []string) map[string][]string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make(map[string][]string, len(nodeIDs))
	for _, id := range nodeIDs {
		if _, done := out[id]; done {
			continue
		}
		for rackID, rk := range r.racks {
			if _, ok := rk.nodes[id]; ok {
				out[id] = append(out[id], rackID)
			}
		}
		slices.Sort(out[id])
	}
	return out
}
