package download_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

// TestDownload_AHungHostLeavesSlotsForAnother: four artifacts on a host
// that holds every request take only MaxPerHost (2) of the 4 slots, so an
// artifact on another host downloads while they hang. With one bound for
// all hosts they took all four and the other waited behind them.
func TestDownload_AHungHostLeavesSlotsForAnother(t *testing.T) {
	slow := startServer(t, artifactsim.Options{})
	var hung []artifactsim.Artifact
	for i := range 4 {
		name := fmt.Sprintf("p/hung-%d.fwpkg", i)
		hung = append(hung, slow.Publish(name, []byte(name)))
		slow.SetFault(name, artifactsim.Fault{Hold: true})
	}
	fast := startServer(t, artifactsim.Options{})
	quick := fast.Publish("p/quick.fwpkg", []byte("quick"))
	d, logs := newDownloader(t, download.Options{Concurrency: 4, MaxPerHost: 2})
	ctx := testCtx(t)
	dir := t.TempDir()
	var wg sync.WaitGroup
	var hungErr error
	wg.Go(func() { _, hungErr = d.Download(ctx, dir, artifactsOf(t, "HTTP", hung...), hw.Secret{}) })
	if err := slow.WaitHeld(ctx, 2); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, ctx, 2, "artifact waiting for a download slot")

	if _, err := d.Download(ctx, dir, artifactsOf(t, "HTTP", quick), hw.Secret{}); err != nil {
		t.Fatalf("the other host's artifact: %v", err)
	}
	if held, max := slow.Held(), slow.MaxInFlight(); held != 2 || max != 2 {
		t.Errorf("hung host: %d held, at most %d in flight; want 2 and 2", held, max)
	}
	slow.Release(len(hung))
	wg.Wait()
	if hungErr != nil {
		t.Fatal(hungErr)
	}
}
