package download

import (
	"context"
	"errors"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// isReady reports whether w holds a slot, without waiting.
func isReady(w *slotWaiter) bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

// readyOf returns which of ws hold a slot, as a string of 0 and 1.
func readyOf(ws ...*slotWaiter) string {
	b := make([]byte, len(ws))
	for i, w := range ws {
		b[i] = '0'
		if isReady(w) {
			b[i] = '1'
		}
	}
	return string(b)
}

// TestSlots_PerHostLimitLeavesSlotsForOtherHosts: four waiters on one
// host take only the per-host limit of four slots; a later waiter on
// another host gets one at once.
func TestSlots_PerHostLimitLeavesSlotsForOtherHosts(t *testing.T) {
	s := newSlots(4, 2)
	var slow []*slotWaiter
	for range 4 {
		slow = append(slow, s.enqueue("obj-a", "slow:80"))
	}
	if got := readyOf(slow...); got != "1100" {
		t.Fatalf("slow host waiters ready %s, want 1100", got)
	}
	fast := s.enqueue("obj-b", "fast:80")
	if !isReady(fast) {
		t.Fatal("a waiter on another host waits while two of four slots are free")
	}
	s.release("obj-b", "fast:80")
	if got := readyOf(slow...); got != "1100" {
		t.Fatalf("after the other host's release, slow host waiters ready %s, want 1100 (its limit)", got)
	}
	s.release("obj-a", "slow:80")
	if got := readyOf(slow...); got != "1110" {
		t.Fatalf("after a slow host release, ready %s, want 1110", got)
	}
}

// TestSlots_HostsTakeFreedSlotsInTurn: with one slot, the hosts an
// object's artifacts queued for are served round-robin, each host's queue
// in arrival order, so a host with a long queue does not keep the others
// waiting behind all of it.
func TestSlots_HostsTakeFreedSlotsInTurn(t *testing.T) {
	s := newSlots(1, 1)
	a1, a2, a3 := s.enqueue("obj", "a"), s.enqueue("obj", "a"), s.enqueue("obj", "a")
	b1, b2 := s.enqueue("obj", "b"), s.enqueue("obj", "b")
	c1 := s.enqueue("obj", "c")
	order := []struct {
		host string
		w    *slotWaiter
	}{{"a", a1}, {"b", b1}, {"c", c1}, {"a", a2}, {"b", b2}, {"a", a3}}
	all := []*slotWaiter{a1, a2, a3, b1, b2, c1}
	for i, o := range order {
		if !isReady(o.w) {
			t.Fatalf("turn %d: the waiter of host %s has no slot; ready %s (a1 a2 a3 b1 b2 c1)", i, o.host, readyOf(all...))
		}
		n := 0
		for _, w := range all {
			if isReady(w) {
				n++
			}
		}
		if n != i+1 {
			t.Fatalf("turn %d: %d waiters hold or held a slot, want %d", i, n, i+1)
		}
		s.release("obj", o.host)
	}
	if len(s.hosts) != 0 || len(s.objects) != 0 || s.running != 0 {
		t.Fatalf("idle slots keep hosts %v, objects %v, running %d", s.hosts, s.objects, s.running)
	}
}

// TestSlots_CancelledWaiterLeavesTheQueue: a waiter whose context ends
// leaves its host's queue, and the slot goes to the next one.
func TestSlots_CancelledWaiterLeavesTheQueue(t *testing.T) {
	s := newSlots(1, 1)
	held, err := s.acquire(context.Background(), "obj-a", "a", zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.acquire(ctx, "obj-b", "b", zerolog.Nop()); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled acquire returned %v", err)
	}
	next := s.enqueue("obj-c", "c")
	held()
	if !isReady(next) {
		t.Fatal("the slot did not go to the waiter after the cancelled one")
	}
	s.release("obj-c", "c")
	if len(s.hosts) != 0 || len(s.objects) != 0 {
		t.Fatalf("idle slots keep hosts %v, objects %v", s.hosts, s.objects)
	}
}

func TestHostOf(t *testing.T) {
	tests := []struct {
		src  manifest.Source
		want string
	}{
		{manifest.Source{Kind: manifest.SourceHTTP, URL: "https://Repo.Example:8443/p/x.fwpkg?sig=1"}, "repo.example:8443"},
		{manifest.Source{Kind: manifest.SourceArtifactory, URL: "http://art.example/x"}, "art.example"},
		{manifest.Source{Kind: manifest.SourceFile, Path: "fw/x.fwpkg"}, localHost},
	}
	for _, tt := range tests {
		if got := hostOf(tt.src); got != tt.want {
			t.Errorf("hostOf(%v) = %q, want %q", tt.src, got, tt.want)
		}
	}
}
