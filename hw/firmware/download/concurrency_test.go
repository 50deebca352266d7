package download_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

// TestDownload_BoundsConcurrentTransfers proves the bound without timing:
// every request is held by the server until released, so with a bound of 2
// exactly 2 arrive while the other 3 artifacts (of two Download calls)
// log that they wait for a slot; released, they run and the server never
// sees more than 2 at once.
func TestDownload_BoundsConcurrentTransfers(t *testing.T) {
	const bound = 2
	s := startServer(t, artifactsim.Options{})
	var published []artifactsim.Artifact
	for i := range 5 {
		name := fmt.Sprintf("p/simfw-%d-1.0.%d.fwpkg", i, i)
		published = append(published, s.PublishPackage(name, fmt.Sprintf("1.0.%d", i), 8<<10))
		s.SetFault(name, artifactsim.Fault{Hold: true})
	}
	d, logs := newDownloader(t, download.Options{Concurrency: bound})
	ctx := testCtx(t)
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, batch := range [][]artifactsim.Artifact{published[:3], published[3:]} {
		arts := artifactsOf(t, "HTTP", batch...)
		wg.Go(func() { _, errs[i] = d.Download(ctx, dir, arts, hw.Secret{}) })
	}
	if err := s.WaitHeld(ctx, bound); err != nil {
		t.Fatal(err)
	}
	logs.waitFor(t, ctx, len(published)-bound, "artifact waiting for a download slot")
	if held, in := s.Held(), s.InFlight(); held != bound || in != bound {
		t.Fatalf("held %d, in flight %d with 3 artifacts waiting for a slot; want %d", held, in, bound)
	}
	s.Release(len(published))
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if max, n := s.MaxInFlight(), len(s.Requests()); max != bound || n != len(published) {
		t.Fatalf("at most %d in flight over %d requests; want %d over %d", max, n, bound, len(published))
	}
}
