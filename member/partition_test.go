package member

import (
	"testing"

	"github.com/rmsd/rmsd/store"
)

// TestExactlyOneSideOfAHealedPartitionYields: for every pair of sides,
// the two members compute opposite answers, and the answer is the
// smaller side, then the side without the lowest member id, then the
// higher of the two members.
func TestExactlyOneSideOfAHealedPartitionYields(t *testing.T) {
	for _, tc := range []struct {
		name          string
		self, peer    string
		mine, theirs  side
		selfMustYield bool
	}{
		{"one against two", "m-0", "m-1", side{"m-0"}, side{"m-1", "m-2"}, true},
		{"two against one", "m-2", "m-0", side{"m-1", "m-2"}, side{"m-0"}, false},
		{"tie: the side with the lowest id stays", "m-0", "m-1", side{"m-0"}, side{"m-1"}, false},
		{"tie of two: lowest id decides, not the members asking", "m-3", "m-2", side{"m-0", "m-3"}, side{"m-1", "m-2"}, false},
		{"tie sharing the lowest member: the higher asking member yields", "m-2", "m-1", side{"m-0", "m-2"}, side{"m-0", "m-1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := yields(tc.self, tc.peer, tc.mine, tc.theirs); got != tc.selfMustYield {
				t.Errorf("%s yields = %v, want %v", tc.self, got, tc.selfMustYield)
			}
			if got := yields(tc.peer, tc.self, tc.theirs, tc.mine); got == tc.selfMustYield {
				t.Errorf("%s (the peer) yields = %v, want %v: exactly one side yields", tc.peer, got, !tc.selfMustYield)
			}
		})
	}
}

// TestSideIsReadFromTheStoreRows: a side is the row's member and its
// view's members named by their rows; a system no row names counts on
// its own.
func TestSideIsReadFromTheStoreRows(t *testing.T) {
	rows := map[string]store.MemberView{
		"s0": {Member: "m-0", System: "s0"},
		"s1": {Member: "m-1", System: "s1", View: []string{"s0", "gone"}},
	}
	got := sideOf(rows["s1"], rows)
	want := side{"m-0", "m-1", "system:gone"}
	if len(got) != len(want) {
		t.Fatalf("side = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("side = %v, want %v", got, want)
		}
	}
}
