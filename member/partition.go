package member

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rmsd/rmsd/store"
)

// After a partition between members heals, each side has blocked the
// other for good (protoactor never lets a blocked actor system back in)
// while both still hold racks. Both sides find the mutual block by asking
// the members they blocked (askBlocked) and decide, each on its own but
// from the same store rows, which side yields: the yielding side fences
// itself as a blocked member does, and its restart joins the other side.

// side is the member ids of one side of a healed partition: a member and
// the members in its view, as its row in the store says.
type side []string

// sideOf returns row's side: its member and the members of its view,
// named by their rows (bySystem: every row by actor system id); a view
// entry no row names (a process since replaced) counts under its system
// id, so that both sides count it alike.
func sideOf(row store.MemberView, bySystem map[string]store.MemberView) side {
	s := side{row.Member}
	for _, sys := range row.View {
		if r, ok := bySystem[sys]; ok {
			s = append(s, r.Member)
		} else {
			s = append(s, "system:"+sys)
		}
	}
	slices.Sort(s)
	return slices.Compact(s)
}

// yields decides whether self's side yields to peer's after a partition
// between them healed with each having blocked the other. Both members
// compute it from the same two sides, and exactly one of them yields: the
// smaller side; between sides of one size, the side whose lowest member
// id is higher; between sides sharing their lowest member (a partition
// that was not clean), the one of the two members whose id is higher.
func yields(self, peer string, mine, theirs side) bool {
	if len(mine) != len(theirs) {
		return len(mine) < len(theirs)
	}
	if mine[0] != theirs[0] {
		return mine[0] > theirs[0]
	}
	return self > peer
}

// partitionError is the cause of a member's fencing after a healed
// partition: it and a member of the other side blocked each other, and
// its side is the one that yields.
type partitionError struct {
	peerAddr, peerSystem string
	mine, theirs         side
}

func (e *partitionError) Error() string {
	return fmt.Sprintf("the partition between this member's side [%s] and the side [%s] of the member at %s (actor system %s) has healed; "+
		"each side has blocked the other from the cluster for good, and the smaller side (on a tie, the one without the lowest member id) "+
		"yields: this member no longer acts on its racks and releases them", strings.Join(e.mine, " "), strings.Join(e.theirs, " "), e.peerAddr, e.peerSystem)
}
