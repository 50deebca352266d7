package download_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

// TestDownload_AHungHostLeavesSlotsForAnother: four objects of two
// artifacts each on a host that holds every request take only MaxPerHost
// (2) of the 4 slots, so a fifth object on another host downloads while
// they hang. With one bound for all hosts they took all four and the
// other waited behind them. Then, as the hung host's transfers end one at
// a time, its slots go to the waiting objects in turn (one artifact of
// each, then the second of each); served in arrival order, an object's
// second artifact went before the next object's first.
func TestDownload_AHungHostLeavesSlotsForAnother(t *testing.T) {
	slow := startServer(t, artifactsim.Options{})
	fast := startServer(t, artifactsim.Options{})
	quick := fast.Publish("p/quick.fwpkg", []byte("quick"))
	d, logs := newDownloader(t, download.Options{Concurrency: 4, MaxPerHost: 2})
	ctx := testCtx(t)
	root := t.TempDir()

	var wg sync.WaitGroup
	hungErrs := make([]error, 4)
	for o := range 4 {
		var arts []artifactsim.Artifact
		for i := range 2 {
			name := fmt.Sprintf("p/o%d-%d.fwpkg", o, i)
			arts = append(arts, slow.Publish(name, []byte(name)))
			slow.SetFault(name, artifactsim.Fault{Hold: true})
		}
		dir := filepath.Join(root, fmt.Sprintf("objects/o%d", o))
		wg.Go(func() { _, hungErrs[o] = d.Download(ctx, dir, artifactsOf(t, "HTTP", arts...), hw.Secret{}) })
		// One object after the other, so they queue in a known order: the
		// first takes both of the host's slots, the others wait.
		if o == 0 {
			if err := slow.WaitHeld(ctx, 2); err != nil {
				t.Fatal(err)
			}
		} else {
			logs.waitFor(t, ctx, 2*o, "artifact waiting for a download slot")
		}
	}

	if _, err := d.Download(ctx, filepath.Join(root, "objects/quick"), artifactsOf(t, "HTTP", quick), hw.Secret{}); err != nil {
		t.Fatalf("the other host's object: %v", err)
	}
	if held, max := slow.Held(), slow.MaxInFlight(); held != 2 || max != 2 {
		t.Errorf("hung host: %d held, at most %d in flight; want 2 and 2", held, max)
	}

	// Let the hung host's transfers end one at a time; each frees a slot
	// that the next object in turn takes.
	seen := slow.HeldNames()
	var granted []string
	for range 6 {
		slow.Release(1)
		names, err := slow.WaitHeldNames(ctx, func(names []string) bool {
			return slices.ContainsFunc(names, func(n string) bool { return !slices.Contains(seen, n) })
		})
		if err != nil {
			t.Fatalf("no further transfer after %v: %v", granted, err)
		}
		for _, n := range names {
			if !slices.Contains(seen, n) {
				seen = append(seen, n)
				granted = append(granted, strings.Split(strings.TrimPrefix(n, "p/"), "-")[0])
			}
		}
	}
	// The objects' artifacts queue in any order, the objects in order.
	want := []string{"o1", "o2", "o3", "o1", "o2", "o3"}
	if !slices.Equal(granted, want) {
		t.Errorf("the hung host's freed slots went to the objects %v, want %v (one artifact per object in turn)", granted, want)
	}
	slow.Release(2)
	wg.Wait()
	for o, err := range hungErrs {
		if err != nil {
			t.Errorf("object o%d: %v", o, err)
		}
	}
}
