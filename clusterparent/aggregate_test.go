package clusterparent

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

var created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// batch is a rack's batch of state with one child per given child state.
func batch(rack string, state messages.JobState, updated time.Time, kids ...messages.JobState) []messages.JobSnapshot {
	out := []messages.JobSnapshot{{ID: rack + "-batch", RackID: rack, State: state, CreatedAt: created, UpdatedAt: updated}}
	for i, s := range kids {
		out = append(out, messages.JobSnapshot{ID: rack + "-child-" + string(rune('a'+i)), ParentID: rack + "-batch",
			RackID: rack, NodeID: "node", State: s, CreatedAt: created, UpdatedAt: updated})
	}
	return out
}

func parentOver(racks ...store.ClusterParentRack) store.ClusterParent {
	return store.ClusterParent{ID: "parent-1", Type: messages.TypeSwitchSystemPasswordUpdate.String(),
		Method: "/rack_manager.RackManager/UpdateSwitchSystemPassword", Member: "m1", CreatedAt: created, Racks: racks}
}

// A cluster parent over racks whose children run is Running, lists every
// rack's children in rack order with their ids, and was last updated when
// its latest rack batch was; once they have all ended it shows the
// batch verdict, Failed when a child failed.
func TestAggregateFollowsTheRacksChildren(t *testing.T) {
	p := parentOver(store.ClusterParentRack{RackID: "r2", JobID: "r2-batch"}, store.ClusterParentRack{RackID: "r1", JobID: "r1-batch"})
	later := created.Add(time.Minute)
	snaps, err := Aggregate(p, []RackBatch{
		{Jobs: batch("r2", messages.StateRunning, later, messages.StateRunning)},
		{Jobs: batch("r1", messages.StateCompleted, created.Add(time.Second), messages.StateCompleted, messages.StateCompleted)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := snaps[0]; got.ID != "parent-1" || got.State != messages.StateRunning || !got.UpdatedAt.Equal(later) ||
		got.Type != messages.TypeSwitchSystemPasswordUpdate {
		t.Errorf("parent %+v, want Running, updated %v", got, later)
	}
	want := []string{"r2-child-a", "r1-child-a", "r1-child-b"}
	if !slices.Equal(snaps[0].ChildIDs, want) || len(snaps) != 4 || snaps[1].ID != want[0] || snaps[3].ID != want[2] {
		t.Errorf("children %v (%d snapshots), want %v", snaps[0].ChildIDs, len(snaps), want)
	}

	snaps, err = Aggregate(p, []RackBatch{
		{Jobs: batch("r2", messages.StateFailed, later, messages.StateFailed)},
		{Jobs: batch("r1", messages.StateCompleted, later, messages.StateCompleted, messages.StateCompleted)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := snaps[0]; got.State != messages.StateFailed || got.ErrorMessage == "" {
		t.Errorf("parent %+v, want Failed with a message", got)
	}
}

// A rack whose batch is gone counts as missing, not as an error; a rack
// that admitted nothing has no children; a parent none of whose racks
// started anything is Failed, naming each rack's reason.
func TestAggregateOfRacksWithoutChildren(t *testing.T) {
	p := parentOver(store.ClusterParentRack{RackID: "r1", JobID: "r1-batch"},
		store.ClusterParentRack{RackID: "r2", Failure: "owner not reachable; retry"},
		store.ClusterParentRack{RackID: "r3", JobID: "r3-batch"})
	snaps, err := Aggregate(p, []RackBatch{
		{Jobs: batch("r1", messages.StateCompleted, created, messages.StateCompleted)},
		{},
		{Err: messages.ErrJobNotFound},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := snaps[0]; got.State == messages.StateRunning || len(got.ChildIDs) != 1 {
		t.Errorf("with a batch gone: %+v, want ended with one child", got)
	}

	snaps, err = Aggregate(p, []RackBatch{
		{Jobs: batch("r1", messages.StateFailed, created)},
		{},
		{Jobs: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	// r3's empty answer is a batch gone: the parent is not "none started".
	if got := snaps[0]; strings.Contains(got.ErrorMessage, "was started") {
		t.Errorf("a batch gone counted as not started: %+v", got)
	}

	p.Racks = p.Racks[:2]
	r1 := batch("r1", messages.StateFailed, created)
	r1[0].ErrorMessage = "no such node"
	snaps, err = Aggregate(p, []RackBatch{{Jobs: r1}, {}})
	if err != nil {
		t.Fatal(err)
	}
	got := snaps[0]
	if got.State != messages.StateFailed || got.ErrorCode != messages.ErrorInvalidArgument || len(snaps) != 1 ||
		!strings.Contains(got.ErrorMessage, "rack r1: no such node") || !strings.Contains(got.ErrorMessage, "rack r2: owner not reachable; retry") {
		t.Errorf("none started: %+v", got)
	}
}

// A rack whose owner did not answer fails the read; a wrong number of
// reads is refused.
func TestAggregateReturnsReadErrors(t *testing.T) {
	p := parentOver(store.ClusterParentRack{RackID: "r1", JobID: "r1-batch"})
	unreachable := errors.New("rack r1: owner not reachable")
	if _, err := Aggregate(p, []RackBatch{{Err: unreachable}}); !errors.Is(err, unreachable) {
		t.Errorf("read error: %v", err)
	}
	if _, err := Aggregate(p, nil); err == nil {
		t.Error("no reads for one rack: no error")
	}
}
