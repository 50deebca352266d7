package powerview

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestView_KeepsTheLastStateAndTellsOnlyChanges(t *testing.T) {
	v := New(nil)
	sub := v.Subscribe(8)
	defer sub.Close()
	v.Seen("r", "n", platform.PowerStateOn)
	v.Seen("r", "n", platform.PowerStateOn) // no change: not told
	v.Seen("r", "n", platform.PowerStateOff)
	v.Seen("other", "n", platform.PowerStateUnknown)
	for _, want := range []platform.PowerState{platform.PowerStateOn, platform.PowerStateOff, platform.PowerStateUnknown} {
		if e := <-sub.C(); e.State != want {
			t.Fatalf("change %+v, want %s", e, want)
		}
	}
	if e, ok := v.Get("r", "n"); !ok || e.State != platform.PowerStateOff {
		t.Fatalf("get %+v %v", e, ok)
	}
	if got := v.Rack("r"); len(got) != 1 || got["n"].State != platform.PowerStateOff {
		t.Fatalf("rack %+v", got)
	}
	if _, ok := v.Get("r", "never"); ok {
		t.Fatal("a node never read is known")
	}
}

func TestView_DropsASubscriberThatFallsBehind(t *testing.T) {
	v := New(nil)
	sub := v.Subscribe(1)
	v.Seen("r", "a", platform.PowerStateOn)
	v.Seen("r", "b", platform.PowerStateOn) // the buffer is full: dropped, not waited for
	n := 0
	for range sub.C() {
		n++
	}
	if n != 1 || !sub.Dropped() {
		t.Fatalf("%d changes, dropped %v", n, sub.Dropped())
	}
	sub.Close()
}

func TestRefresher_ReadsEachNodeNotSkippedOnePerRound(t *testing.T) {
	nodes := []hw.Node{{ID: "a", RackID: "r"}, {ID: "held", RackID: "r"}, {ID: "b", RackID: "r"}}
	var mu sync.Mutex
	var reads []string
	inFlight, most := 0, 0
	rounds := make(chan struct{}, 16)
	ctx, cancel := context.WithCancel(context.Background())
	r := Refresher{Every: time.Millisecond, Timeout: time.Second,
		Nodes: func() []hw.Node { return nodes },
		Skip: func(context.Context) func(hw.Node) bool {
			return func(n hw.Node) bool { return n.ID == "held" }
		},
		Read: func(_ context.Context, n hw.Node) error {
			mu.Lock()
			inFlight++
			most = max(most, inFlight)
			reads = append(reads, n.ID)
			if n.ID == "b" {
				rounds <- struct{}{}
			}
			inFlight--
			mu.Unlock()
			return errors.New("unreachable")
		}}
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	<-rounds
	<-rounds
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(reads) < 4 || reads[0] != "a" || reads[1] != "b" || reads[2] != "a" || reads[3] != "b" || most != 1 {
		t.Fatalf("reads %v, most in flight %d", reads, most)
	}
}
