package racks

import (
	"errors"
	"testing"

	"github.com/rmsd/rmsd/hw"
)

// TestReloadRackReplacesTheRacksNodesWithoutTheObserver: a member takes in
// another member's changes of a rack as the store has them: nodes added,
// changed and removed, the observer not told (nothing is written back),
// other racks untouched, and a device another rack has refused.
func TestReloadRackReplacesTheRacksNodesWithoutTheObserver(t *testing.T) {
	r := New(nil)
	observed := 0
	c1, c2, other := node("r1", "c1", hw.ComputeGB200Nvidia), node("r1", "c2", hw.ComputeGB200Nvidia), node("r2", "c9", hw.ComputeGB200Nvidia)
	if errs := r.Create([]hw.Node{c1, c2, other}); errors.Join(errs...) != nil {
		t.Fatal(errs)
	}
	r.Observe(func(hw.Ref, *hw.Node) error { observed++; return nil })

	moved := node("r1", "c1", hw.ComputeGB200Nvidia) // c1 with c2's BMC: a device moved within the rack
	moved.BMC = c2.BMC
	added := node("r1", "c3", hw.ComputeGB200Nvidia)
	clash := node("r1", "c4", hw.ComputeGB200Nvidia)
	clash.BMC = other.BMC
	errs := r.ReloadRack("r1", hw.ComputeGB200Nvidia.Family(), []hw.Node{moved, added, clash})
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], ErrConflict) {
		t.Fatalf("reload errors = %v, want nil, nil and a conflict for the device of rack r2", errs)
	}
	if observed != 0 {
		t.Errorf("the observer was told of %d reloaded changes, want none", observed)
	}
	got, err := r.RackNodes("r1")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]hw.Node{}
	for _, n := range got {
		ids[n.ID] = n
	}
	if len(ids) != 2 || ids["c1"].BMC.IP != c2.BMC.IP || ids["c3"].ID != "c3" {
		t.Errorf("rack r1 after the reload = %+v, want c1 (with c2's BMC) and c3", got)
	}
	if n, err := r.Node("r2", "c9"); err != nil || n.BMC.IP != other.BMC.IP {
		t.Errorf("rack r2 after reloading r1 = %+v, %v; want it untouched", n, err)
	}
	// c2's old BMC is c1's now: registering it elsewhere is refused; c1's
	// old BMC is free again.
	again := node("r3", "x", hw.ComputeGB200Nvidia)
	again.BMC = c2.BMC
	free := node("r3", "y", hw.ComputeGB200Nvidia)
	free.BMC = c1.BMC
	errs = r.Create([]hw.Node{again, free})
	if !errors.Is(errs[0], ErrConflict) || errs[1] != nil {
		t.Errorf("create after the reload = %v, want a conflict for c1's new BMC and c1's old one free", errs)
	}
}
