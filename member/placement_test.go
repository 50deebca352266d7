package member

import (
	"fmt"
	"testing"

	"github.com/asynkron/protoactor-go/cluster"
)

// placementSite is three members hosting racks and one hosting nothing,
// and forty racks.
func placementSite() ([]*cluster.Member, []*cluster.ClusterIdentity) {
	members := []*cluster.Member{
		{Id: "a", Host: "10.0.0.1", Port: 7000, Kinds: []string{rackKind}},
		{Id: "b", Host: "10.0.0.2", Port: 7000, Kinds: []string{rackKind}},
		{Id: "c", Host: "10.0.0.3", Port: 7000, Kinds: []string{rackKind}},
		{Id: "client", Host: "10.0.0.4", Port: 7000},
	}
	var racks []*cluster.ClusterIdentity
	for i := range 40 {
		racks = append(racks, cluster.NewClusterIdentity(fmt.Sprintf("rack-%d", i), rackKind))
	}
	return members, racks
}

// TestPlacementWithoutDrainsIsTheDistributedHash: while no member drains,
// every rack is placed where protoactor's distributed hash places it, so
// members with this lookup and members with disthash agree.
func TestPlacementWithoutDrainsIsTheDistributedHash(t *testing.T) {
	members, racks := placementSite()
	rdv := cluster.NewRendezvous()
	rdv.UpdateMembers(members)
	for _, r := range racks {
		if got, want := place(members, nil, r), rdv.GetByClusterIdentity(r); got != want {
			t.Errorf("%s placed on %q, disthash places it on %q", r.Identity, got, want)
		}
	}
}

// TestADrainingMemberKeepsOnlyItsBusyRacks: once a member drains, only the
// racks it keeps are placed on it; its other racks move to the members
// that do not drain, and no rack of those moves.
func TestADrainingMemberKeepsOnlyItsBusyRacks(t *testing.T) {
	members, racks := placementSite()
	drainer := members[0]
	var onDrainer []*cluster.ClusterIdentity
	before := map[string]string{}
	for _, r := range racks {
		before[r.Identity] = place(members, nil, r)
		if before[r.Identity] == drainer.Address() {
			onDrainer = append(onDrainer, r)
		}
	}
	if len(onDrainer) < 2 {
		t.Fatalf("the site places %d racks on %s; the test needs two", len(onDrainer), drainer.Id)
	}
	busy := onDrainer[0]
	drains := map[string]map[string]bool{drainer.Id: {busy.Identity: true}}
	for _, r := range racks {
		got := place(members, drains, r)
		switch {
		case r == busy && got != drainer.Address():
			t.Errorf("kept %s placed on %s, want the draining %s", r.Identity, got, drainer.Address())
		case r != busy && got == drainer.Address():
			t.Errorf("idle %s placed on the draining %s", r.Identity, got)
		case before[r.Identity] != drainer.Address() && got != before[r.Identity]:
			t.Errorf("%s moved from %s to %s, though its member does not drain", r.Identity, before[r.Identity], got)
		case got == members[3].Address() || got == "":
			t.Errorf("%s placed on %q", r.Identity, got)
		}
	}
	// The busy rack is kept no longer: it moves as the others did.
	delete(drains[drainer.Id], busy.Identity)
	if got := place(members, drains, busy); got == drainer.Address() || got == "" {
		t.Errorf("%s no longer kept, placed on %q", busy.Identity, got)
	}
}

// TestWhenEveryMemberDrainsRacksStayPut: with no member left that does not
// drain, racks are placed as before the drains (nowhere else to go).
func TestWhenEveryMemberDrainsRacksStayPut(t *testing.T) {
	members, racks := placementSite()
	drains := map[string]map[string]bool{"a": {}, "b": {}, "c": {}}
	for _, r := range racks {
		if got, want := place(members, drains, r), place(members, nil, r); got != want {
			t.Errorf("%s placed on %q, want %q as before the drains", r.Identity, got, want)
		}
	}
}

// TestAMemberMissingFromItsOwnViewPlacesAsTheOthersDo: a member's own view
// of the membership can lack itself for a while (it joined last, or a
// poll of its own health port timed out) while the others place racks on
// it. It still places as they do, so it keeps what they send it; and a
// draining member keeps its busy racks, rather than handing them over
// with their jobs running (a SIGTERM right after the member joined). A
// member with no view yet places nothing.
func TestAMemberMissingFromItsOwnViewPlacesAsTheOthersDo(t *testing.T) {
	members, racks := placementSite()
	self := members[0]
	view := members[1:] // the others' entries, not its own
	var busy *cluster.ClusterIdentity
	for _, r := range racks {
		want := place(members, nil, r)
		if got := place(withSelf(view, self), nil, r); got != want {
			t.Errorf("%s placed on %q by a member missing from its own view, the others place it on %q", r.Identity, got, want)
		}
		if busy == nil && want == self.Address() {
			busy = r
		}
	}
	if busy == nil {
		t.Fatalf("the site places no rack on %s; the test needs one", self.Id)
	}
	drains := map[string]map[string]bool{self.Id: {busy.Identity: true}}
	if got := place(withSelf(view, self), drains, busy); got != self.Address() {
		t.Errorf("kept %s placed on %q by its draining member missing from its own view, want %q", busy.Identity, got, self.Address())
	}
	if got := place(withSelf(members, self), drains, busy); got != self.Address() {
		t.Errorf("kept %s placed on %q, want %q", busy.Identity, got, self.Address())
	}
	if got := len(withSelf(members, self)); got != len(members) {
		t.Errorf("a view with the member in it became %d members, want %d", got, len(members))
	}
	if got := place(withSelf(nil, self), nil, busy); got != "" {
		t.Errorf("a member with no view yet placed %s on %q, want nowhere", busy.Identity, got)
	}
}
