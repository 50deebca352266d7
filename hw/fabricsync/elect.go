package fabricsync

import (
	"context"
	"fmt"
	"sort"

	"github.com/rmsd/rmsd/hw"
)

// Elect returns the switch at the lowest slot number (switches reporting
// none last, node id breaking ties), reading every slot with slot. With
// strict, a switch whose slot cannot be read or that reports none fails
// the election (a layout's positions must all resolve); otherwise only a
// failed read does.
func Elect(ctx context.Context, slot func(context.Context, hw.Node) (*int64, error), switches []hw.Node, strict bool) (hw.Node, error) {
	if len(switches) == 0 {
		return hw.Node{}, fmt.Errorf("no switches to elect a primary from")
	}
	type placed struct {
		n    hw.Node
		slot *int64
	}
	all := make([]placed, len(switches))
	for i, n := range switches {
		s, err := slot(ctx, n)
		if err != nil {
			return hw.Node{}, fmt.Errorf("rack position of switch %s: %w", n.ID, err)
		}
		if s == nil && strict {
			return hw.Node{}, fmt.Errorf("rack position of switch %s: it reports no slot number", n.ID)
		}
		all[i] = placed{n, s}
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		switch {
		case a.slot != nil && b.slot != nil && *a.slot != *b.slot:
			return *a.slot < *b.slot
		case (a.slot == nil) != (b.slot == nil):
			return a.slot != nil
		default:
			return a.n.ID < b.n.ID
		}
	})
	return all[0].n, nil
}
