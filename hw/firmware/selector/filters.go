package selector

import (
	"github.com/rmsd/rmsd/hw/firmware/manifest"

	"github.com/rmsd/rmsd/hw"
)

// filter is one node type's component filter: every component, or the
// named ones (normalised names).
type filter struct {
	all   bool
	names map[string]bool
}

func newFilter(components []string) filter {
	f := filter{names: map[string]bool{}}
	for _, c := range components {
		if n := manifest.Normalise(c); n != "" {
			f.names[n] = true
		}
	}
	f.all = len(f.names) == 0
	return f
}

// Filters is a request's component filters, resolved to node types. The
// zero value selects everything (but the opt-in NIC components).
type Filters struct {
	byType map[hw.NodeType]filter
	global *filter
}

// NewFilters builds the filters of a request: byEnum keyed by the wire
// node type, byDescriptor by the node type a descriptor resolved to (an
// enum entry wins over a descriptor entry for the same type) and the
// deprecated global list (nil when absent).
func NewFilters(byEnum, byDescriptor map[hw.NodeType][]string, global []string) Filters {
	f := Filters{}
	if len(byEnum)+len(byDescriptor) > 0 {
		f.byType = map[hw.NodeType]filter{}
		for t, cs := range byDescriptor {
			f.byType[t] = newFilter(cs)
		}
		for t, cs := range byEnum {
			f.byType[t] = newFilter(cs)
		}
	}
	if len(global) > 0 {
		g := newFilter(global)
		f.global = &g
	}
	return f
}

// IsZero reports whether no filter was given.
func (f Filters) IsZero() bool { return f.byType == nil && f.global == nil }

// forType returns the filter that applies to node type t; ok is false when
// filters were given and none lists t (the type is not updated).
func (f Filters) forType(t hw.NodeType) (filter, bool) {
	if fl, ok := f.byType[t]; ok {
		return fl, true
	}
	if f.global != nil {
		return *f.global, true
	}
	if f.byType != nil {
		return filter{}, false
	}
	return filter{all: true}, true
}
