package nodeops

import (
	"sync"

	"github.com/rmsd/rmsd/hw/platform"
)

// DefaultMaxAdapters bounds the platform adapters a Runner keeps for
// reuse: room for a site of 10,000 BMCs and more. An adapter is a few
// hundred bytes (the node's configuration and its Redfish client), so a
// full cache costs a few MiB; past the bound, operations still run, with
// some adapters built again.
const DefaultMaxAdapters = 16384

// adapters keeps the platform adapter of every management address recently
// operated on, so that an operation on a node reuses the adapter of its
// previous one instead of building it again. An entry serves only the
// configuration it was built for: an operation naming the same address
// with anything else changed (node id, type, credentials, port, host
// endpoint) builds a new adapter, which replaces the old one. Adapters
// hold no resources of their own (the shared pools in platform.Deps own
// every connection) and are safe for concurrent use, so an entry can be
// dropped, and reused, while an operation is using it.
type adapters struct {
	max int

	mu sync.Mutex
	// byKey holds the adapters themselves: each knows the configuration
	// it was built from, so an entry keeps no copy of it (a site keeps
	// one entry per BMC for as long as it runs).
	byKey map[string]platform.Device
}

func newAdapters(maxEntries int) *adapters {
	return &adapters{max: max(1, maxEntries), byKey: map[string]platform.Device{}}
}

// get returns the adapter of cfg, whose management address is key,
// building (and keeping) it unless the one kept for key was built from
// the same configuration. A failed build keeps nothing and leaves the
// entry of key as it was.
func (a *adapters) get(deps platform.Deps, key string, cfg platform.Config) (platform.Device, error) {
	a.mu.Lock()
	kept, ok := a.byKey[key]
	a.mu.Unlock()
	if ok && kept.Config() == cfg {
		return kept, nil
	}
	d, err := platform.New(deps, cfg)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, replacing := a.byKey[key]; !replacing && len(a.byKey) >= a.max {
		for k := range a.byKey { // full: drop one entry, whichever the map yields
			delete(a.byKey, k)
			break
		}
	}
	a.byKey[key] = d
	return d, nil
}

// size reports how many adapters are kept (for tests).
func (a *adapters) size() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byKey)
}
