package feed

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSubscribersGetChangesInOrder(t *testing.T) {
	var f Feed[int]
	a, b := f.Subscribe(4), f.Subscribe(4)
	f.Publish(1, 2)
	f.Publish(3)
	for _, s := range []*Subscription[int]{a, b} {
		for want := 1; want <= 3; want++ {
			if got := <-s.C(); got != want {
				t.Fatalf("got %d, want %d", got, want)
			}
		}
	}
	a.Close()
	a.Close() // twice is fine
	if _, open := <-a.C(); open {
		t.Fatal("a closed subscription's channel is open")
	}
	if !f.Listening() {
		t.Fatal("b still listens")
	}
}

func TestASlowSubscriberIsDroppedAndTheOthersKeepTheirs(t *testing.T) {
	var f Feed[int]
	slow, fast := f.Subscribe(1), f.Subscribe(8)
	f.Publish(1, 2, 3)
	if !slow.Dropped() || fast.Dropped() {
		t.Fatalf("dropped: slow %v, fast %v; want true, false", slow.Dropped(), fast.Dropped())
	}
	if got := <-slow.C(); got != 1 {
		t.Fatalf("slow kept %d, want the 1 it had room for", got)
	}
	if _, open := <-slow.C(); open {
		t.Fatal("a dropped subscription's channel is open")
	}
	for want := 1; want <= 3; want++ {
		if got := <-fast.C(); got != want {
			t.Fatalf("fast got %d, want %d", got, want)
		}
	}
}

func TestCloseEndsEverySubscriptionAndLaterOnes(t *testing.T) {
	var f Feed[string]
	s := f.Subscribe(0)
	f.Close()
	if _, open := <-s.C(); open {
		t.Fatal("open after the feed closed")
	}
	if _, open := <-f.Subscribe(2).C(); open {
		t.Fatal("a subscription after Close is open")
	}
	if f.Listening() {
		t.Fatal("a closed feed listens")
	}
	f.Publish("nobody") // no panic on closed channels
}

func TestDropEndsEverySubscriptionAsFallenBehindButNotLaterOnes(t *testing.T) {
	var f Feed[int]
	a, b := f.Subscribe(4), f.Subscribe(4)
	f.Publish(1)
	f.Drop()
	for _, s := range []*Subscription[int]{a, b} {
		if got := <-s.C(); got != 1 {
			t.Fatalf("kept %d, want the 1 published before", got)
		}
		if _, open := <-s.C(); open || !s.Dropped() {
			t.Fatalf("after Drop: open %v, dropped %v; want closed and dropped", open, s.Dropped())
		}
	}
	c := f.Subscribe(2)
	defer c.Close()
	f.Publish(2)
	if got := <-c.C(); got != 2 || c.Dropped() {
		t.Fatalf("a subscription after Drop got %d (dropped %v), want 2", got, c.Dropped())
	}
}
