package nodeops

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
)

func TestLoadCountsRunningAndQueuedOperations(t *testing.T) {
	r := newRunner(t, 1)
	release := make(chan struct{})
	hold := func(ctx context.Context, _ int, _ platform.Device) error {
		<-release
		return nil
	}
	nodes := []hw.Node{fakeNode("a", "127.0.66.40"), fakeNode("b", "127.0.66.41")}
	done := make(chan []error, 1)
	go func() { done <- r.Each(context.Background(), nodes, hold) }()

	// One runs, the other waits for the only slot.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if running, queued := r.Load(); running == 1 && queued == 1 {
			break
		}
		if time.Now().After(deadline) {
			running, queued := r.Load()
			t.Fatalf("Load() = %d running, %d queued; want 1, 1", running, queued)
		}
		runtime.Gosched()
	}
	close(release)
	for i, err := range <-done {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	if running, queued := r.Load(); running != 0 || queued != 0 {
		t.Fatalf("after the batch: Load() = %d running, %d queued", running, queued)
	}
}
