package download

import (
	"strings"
	"testing"
)

// queued is a waiter with the object and host it queued for, named for
// messages.
type queued struct {
	name, object, host string
	w                  *slotWaiter
}

// grantOrder releases each slot as soon as it is granted, one at a time,
// and returns the names of the waiters in the order they got one. It
// fails when more than one waiter holds a slot at once or one never gets
// one. The slots must have room for one transfer at a time.
func grantOrder(t *testing.T, s *slots, qs []queued) string {
	t.Helper()
	done := map[*slotWaiter]bool{}
	var order []string
	for range qs {
		var now []queued
		for _, q := range qs {
			if !done[q.w] && isReady(q.w) {
				now = append(now, q)
			}
		}
		if len(now) != 1 {
			t.Fatalf("after %v, %d waiters hold a slot, want 1", order, len(now))
		}
		done[now[0].w] = true
		order = append(order, now[0].name)
		s.release(now[0].object, now[0].host)
	}
	if len(s.hosts) != 0 || len(s.objects) != 0 || s.running != 0 {
		t.Fatalf("idle slots keep hosts %v, objects %v, running %d", s.hosts, s.objects, s.running)
	}
	return strings.Join(order, " ")
}

// TestSlots_ObjectsTakeAHostsSlotInTurn: object A queues four artifacts
// on a host allowed one transfer, then object B queues one: B's artifact
// gets the host's slot before A's second. Served in arrival order, B
// waited behind all of A's queue.
func TestSlots_ObjectsTakeAHostsSlotInTurn(t *testing.T) {
	s := newSlots(4, 1)
	var a []*slotWaiter
	for range 4 {
		a = append(a, s.enqueue("objects/A", "slow:80"))
	}
	b := s.enqueue("objects/B", "slow:80")
	if got := readyOf(a[0], a[1], a[2], a[3], b); got != "10000" {
		t.Fatalf("ready %s (a1 a2 a3 a4 b), want 10000: the host allows one transfer", got)
	}
	s.release("objects/A", "slow:80")
	if got := readyOf(a[1], b); got != "01" {
		t.Fatalf("after a1, ready %s (a2 b), want 01: B's turn comes before A's second artifact", got)
	}
	// A third object arriving while A still waits has its turn before A's
	// next: A had one, C none.
	c := s.enqueue("objects/C", "slow:80")
	s.release("objects/B", "slow:80")
	if got := readyOf(a[1], c); got != "01" {
		t.Fatalf("after b, ready %s (a2 c), want 01: C's turn comes before A's second artifact", got)
	}
	s.release("objects/C", "slow:80")
	if got := readyOf(a[1], a[2]); got != "10" {
		t.Fatalf("after c, ready %s (a2 a3), want 10", got)
	}
	s.release("objects/A", "slow:80")
	if got := readyOf(a[2], a[3]); got != "10" {
		t.Fatalf("after a2, ready %s (a3 a4), want 10", got)
	}
	s.release("objects/A", "slow:80")
	if !isReady(a[3]) {
		t.Fatal("a4 waits with every slot free")
	}
	s.release("objects/A", "slow:80")
	if len(s.hosts) != 0 || len(s.objects) != 0 || s.running != 0 {
		t.Fatalf("idle slots keep hosts %v, objects %v, running %d", s.hosts, s.objects, s.running)
	}
}

// TestSlots_ObjectsTakeTurnsAcrossHosts: an object whose artifacts come
// from two hosts does not get two turns for one of an object on a single
// host: with one slot, A (hosts x and y) and B (host z) alternate, and
// A's hosts alternate within A's turns. Taking turns by host, A got two
// slots for each of B's.
func TestSlots_ObjectsTakeTurnsAcrossHosts(t *testing.T) {
	s := newSlots(1, 1)
	var qs []queued
	for i, host := range []string{"x", "x", "y", "y"} {
		qs = append(qs, queued{name: "a" + string(rune('1'+i)) + host, object: "A", host: host})
	}
	qs = append(qs, queued{name: "b1z", object: "B", host: "z"}, queued{name: "b2z", object: "B", host: "z"})
	for i := range qs {
		qs[i].w = s.enqueue(qs[i].object, qs[i].host)
	}
	if got, want := grantOrder(t, s, qs), "a1x b1z a3y b2z a2x a4y"; got != want {
		t.Fatalf("slots granted in the order %s, want %s", got, want)
	}
}

// TestSlots_AnObjectWaitingForAFullHostKeepsItsTurn: an object whose
// next artifact waits for a host at its limit does not hold up another
// object, and takes the host's slot first once it frees.
func TestSlots_AnObjectWaitingForAFullHostKeepsItsTurn(t *testing.T) {
	s := newSlots(2, 1)
	a1, a2 := s.enqueue("A", "h"), s.enqueue("A", "h")
	b1, b2 := s.enqueue("B", "g"), s.enqueue("B", "g")
	if got := readyOf(a1, a2, b1, b2); got != "1010" {
		t.Fatalf("ready %s (a1 a2 b1 b2), want 1010", got)
	}
	s.release("B", "g") // A waits for h: B goes on with its own host
	if got := readyOf(a2, b2); got != "01" {
		t.Fatalf("after b1, ready %s (a2 b2), want 01", got)
	}
	c1 := s.enqueue("C", "h")
	s.release("A", "h") // A was served before C arrived, but C never was
	if got := readyOf(a2, c1); got != "01" {
		t.Fatalf("after a1, ready %s (a2 c1), want 01", got)
	}
	s.release("C", "h")
	if !isReady(a2) {
		t.Fatal("a2 waits with its host free")
	}
	s.release("A", "h")
	s.release("B", "g")
	if len(s.hosts) != 0 || len(s.objects) != 0 || s.running != 0 {
		t.Fatalf("idle slots keep hosts %v, objects %v, running %d", s.hosts, s.objects, s.running)
	}
}
