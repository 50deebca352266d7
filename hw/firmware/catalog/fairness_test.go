package catalog_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
)

// TestService_ASlowHostDoesNotStarveAnotherHostsRelease is the starvation
// the per-host limit prevents: four releases on a host that trickles a
// byte at a time queue 24 artifacts, yet hold only 2 of the downloader's 4
// slots, so a release added afterwards on another host becomes available
// while they still trickle.
func TestService_ASlowHostDoesNotStarveAnotherHostsRelease(t *testing.T) {
	fx := newFixture(t, fixtureOptions{}) // 4 slots, 2 per host
	var slow []simrelease.Release
	queued := 0
	for i := range 4 {
		rel := fx.publish(simrelease.Options{Milestone: fmt.Sprintf("slow.%d", i)})
		for _, a := range rel.Artifacts() {
			fx.srv.SetFault(a.Path, artifactsim.Fault{Throttle: 20 * time.Millisecond, ChunkBytes: 1})
			queued++
		}
		fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"})
		slow = append(slow, rel)
	}
	// Two trickle, every other slow artifact waits for a slot.
	fx.waitLines(queued-2, `"artifact waiting for a download slot"`)

	fast, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fast.Close)
	rel, err := simrelease.Publish(fast, simrelease.Options{Milestone: "fast"})
	if err != nil {
		t.Fatal(err)
	}
	fx.add(catalog.AddRequest{ConfigJSON: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	fx.waitObject(rel.ID, "available", available)

	for _, r := range slow {
		if obj := fx.get(r.ID); obj.Available || obj.UnavailableReason != "" {
			t.Errorf("slow object %s finished: %+v", r.ID, obj)
		}
	}
	if in, max := fx.srv.InFlight(), fx.srv.MaxInFlight(); in != 2 || max != 2 {
		t.Errorf("slow host: %d transfers in flight, at most %d; want 2 and 2 (max_downloads_per_host)", in, max)
	}
	var downloading int
	for _, r := range slow {
		for _, a := range fx.get(r.ID).Artifacts {
			if a.State == store.ArtifactDownloading {
				downloading++
			}
		}
	}
	if downloading != queued {
		t.Errorf("%d slow artifacts downloading or waiting, want %d", downloading, queued)
	}
}
