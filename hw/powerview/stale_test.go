package powerview

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
)

func TestStale_QueuesEachNodeOnceInOrderAndDropsWhenFull(t *testing.T) {
	s := NewStale(2)
	a, b, c := hw.Node{ID: "a", RackID: "r"}, hw.Node{ID: "b", RackID: "r"}, hw.Node{ID: "c", RackID: "r"}
	if !s.Mark(a) || s.Mark(a) || !s.Mark(b) {
		t.Fatal("a first mark is refused, or a second one of a queued node taken")
	}
	if s.Mark(c) || s.Dropped() != 1 {
		t.Fatalf("a full queue took a node (dropped %d)", s.Dropped())
	}
	for _, want := range []string{"a", "b"} {
		if n, ok := s.next(); !ok || n.ID != want {
			t.Fatalf("next %v %v, want %s", n, ok, want)
		}
	}
	if _, ok := s.next(); ok {
		t.Fatal("an empty queue gave a node")
	}
	if !s.Mark(a) {
		t.Fatal("a node read already cannot be marked again")
	}
}

// TestRefresher_ReadsAStaleNodesFirmwareWithoutRounds: with no rounds,
// a node marked stale has its firmware read at once, once per mark.
func TestRefresher_ReadsAStaleNodesFirmwareWithoutRounds(t *testing.T) {
	stale := NewStale(0)
	reads := make(chan string, 8)
	r := Refresher{Timeout: time.Second, Stale: stale,
		Nodes: func() []hw.Node { t.Error("a round ran with Every 0"); return nil },
		Read:  func(context.Context, hw.Node) error { t.Error("a power read with Every 0"); return nil },
		ReadFirmware: func(_ context.Context, n hw.Node) error {
			reads <- n.ID
			return nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for _, id := range []string{"x", "y", "x"} {
		stale.Mark(hw.Node{ID: id, RackID: "r"})
		select {
		case got := <-reads:
			if got != id {
				t.Fatalf("read %s, want %s", got, id)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s marked stale was never read", id)
		}
	}
}

// TestRefresher_AStaleNodeDoesNotWaitForTheRound: a node marked while a
// round is under way is read before the round's next node.
func TestRefresher_AStaleNodeDoesNotWaitForTheRound(t *testing.T) {
	stale := NewStale(0)
	nodes := []hw.Node{{ID: "a", RackID: "r"}, {ID: "b", RackID: "r"}, {ID: "c", RackID: "r"}}
	var mu sync.Mutex
	var order []string
	roundDone := make(chan struct{}, 16)
	r := Refresher{Every: time.Millisecond, Timeout: time.Second, Stale: stale,
		Nodes: func() []hw.Node { return nodes },
		Read: func(_ context.Context, n hw.Node) error {
			mu.Lock()
			order = append(order, n.ID)
			mu.Unlock()
			if n.ID == "a" {
				stale.Mark(hw.Node{ID: "c", RackID: "r"}) // its job ended now
			}
			if n.ID == "c" {
				roundDone <- struct{}{}
			}
			return nil
		},
		ReadFirmware: func(_ context.Context, n hw.Node) error {
			mu.Lock()
			order = append(order, "fw:"+n.ID)
			mu.Unlock()
			return nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	select {
	case <-roundDone:
	case <-time.After(30 * time.Second):
		t.Fatal("no round ended")
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(order) < 4 || order[0] != "a" || order[1] != "fw:c" || order[2] != "b" || order[3] != "c" {
		t.Fatalf("reads %v, want a, fw:c, b, c", order)
	}
}

func TestView_TellsAFirmwareInventoryOnlyWhenItChanged(t *testing.T) {
	v := New(nil)
	sub := v.Subscribe(8)
	defer sub.Close()
	old := []platform.Firmware{{ID: "FW_BMC_0", Version: "1.0"}}
	v.SetFirmware("r", "n", old)
	v.SetFirmware("r", "n", []platform.Firmware{{ID: "FW_BMC_0", Version: "1.0"}}) // read again, same
	v.SetFirmware("r", "n", []platform.Firmware{{ID: "FW_BMC_0", Version: "2.0"}})
	for _, want := range []string{"1.0", "2.0"} {
		if e := <-sub.C(); e.Firmware[0].Version != want {
			t.Fatalf("told %+v, want version %s", e.Firmware, want)
		}
	}
	select {
	case e := <-sub.C():
		t.Fatalf("told an unchanged inventory or more: %+v", e)
	default:
	}
	v.SetFirmware("r", "empty", nil)
	if e, ok := v.Get("r", "empty"); !ok || e.Firmware == nil {
		t.Fatal("an empty inventory read is taken for never read")
	}
}
