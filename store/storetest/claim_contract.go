package storetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
)

// claimContract is the takeover of an interrupted firmware download of a
// cluster member that is gone (store.Catalog.ClaimFirmwareDownload).
var claimContract = []struct {
	name string
	fn   func(t *testing.T, b Backend)
}{
	{"ClaimMovesAQuietInterruptedDownload", testClaimMovesAQuietInterruptedDownload},
	{"ClaimRaceHasOneWinner", testClaimRaceHasOneWinner},
	{"ClaimWaitsForAFreshMemberRow", testClaimWaitsForAFreshMemberRow},
}

// claimQuiet is the bound the claim tests pass.
const claimQuiet = time.Minute

func claim(t *testing.T, s store.Catalog, id, from, to string) bool {
	t.Helper()
	ok, err := s.ClaimFirmwareDownload(t.Context(), id, from, to, claimQuiet)
	if err != nil {
		t.Fatalf("%s claims %s from %s: %v", to, id, from, err)
	}
	return ok
}

// An interrupted download moves to the claimant once its heartbeat is
// quiet for the bound, and only from its downloader; a heartbeat stamped
// by its downloader keeps it, one stamped by another member does not; an
// available object and one with a reason are not interrupted.
func testClaimMovesAQuietInterruptedDownload(t *testing.T, b Backend) {
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	c := NewSettableClock(start)
	s := open(t, b, b.Fresh(t), c.Now)
	for _, id := range []string{"interrupted", "available", "failed"} {
		o := object(id, "GB200")
		o.Downloader = "m-gone"
		create(t, s, o)
	}
	if err := s.SetObjectAvailability(t.Context(), "available", true, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetObjectAvailability(t.Context(), "failed", false, "checksum mismatch"); err != nil {
		t.Fatal(err)
	}
	c.Set(start.Add(claimQuiet - time.Second))
	if claim(t, s, "interrupted", "m-gone", "m-a") {
		t.Fatal("claimed a download whose heartbeat is younger than the bound")
	}
	if _, err := s.ClaimFirmwareDownload(t.Context(), "interrupted", "m-gone", "m-a", 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("claim with no bound = %v, want ErrInvalid", err)
	}

	// Its downloader at work keeps it; another member's stamp does not.
	if err := s.TouchFirmwareDownloads(t.Context(), "m-gone", []string{"interrupted", "absent"}); err != nil {
		t.Fatal(err)
	}
	c.Set(start.Add(2*claimQuiet - 2*time.Second))
	if err := s.TouchFirmwareDownloads(t.Context(), "m-b", []string{"interrupted"}); err != nil {
		t.Fatal(err)
	}
	if claim(t, s, "interrupted", "m-gone", "m-a") {
		t.Fatal("claimed a download its downloader stamped within the bound")
	}
	c.Set(start.Add(2*claimQuiet + time.Second))
	for _, id := range []string{"available", "failed", "absent"} {
		if claim(t, s, id, "m-gone", "m-a") {
			t.Errorf("claimed %s, which is not an interrupted download", id)
		}
	}
	if claim(t, s, "interrupted", "m-other", "m-a") {
		t.Fatal("claimed a download from a member that is not its downloader")
	}
	if !claim(t, s, "interrupted", "m-gone", "m-a") {
		t.Fatal("a download quiet for the bound was not claimed")
	}
	got := get(t, s, "interrupted")
	if got.Downloader != "m-a" || got.Available || got.UnavailableReason != "" || !got.Updated.Equal(c.Now()) {
		t.Errorf("claimed object = downloader %q, available %v, reason %q, updated %v; want m-a's, interrupted, updated now",
			got.Downloader, got.Available, got.UnavailableReason, got.Updated)
	}
	if claim(t, s, "interrupted", "m-gone", "m-b") {
		t.Error("claimed again from the member it was taken from")
	}
	// The claim stamped the heartbeat: the new downloader is at work.
	if claim(t, s, "interrupted", "m-a", "m-b") {
		t.Error("claimed from its new downloader at once")
	}
	if o := get(t, s, "available"); o.Downloader != "m-gone" {
		t.Errorf("available object's downloader = %q, want m-gone", o.Downloader)
	}
}

// Members claiming one object at once, each through a store of its own
// (a process of its own): exactly one wins.
func testClaimRaceHasOneWinner(t *testing.T, b Backend) {
	loc := b.Fresh(t)
	start := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	c := NewSettableClock(start)
	o := object("interrupted", "GB200")
	o.Downloader = "m-gone"
	create(t, open(t, b, loc, c.Now), o)
	c.Set(start.Add(2 * claimQuiet))
	const members = 6
	stores := make([]store.Store, members)
	for i := range stores {
		stores[i] = open(t, b, loc, c.Now)
	}
	var (
		wg     sync.WaitGroup
		won    atomic.Int32
		winner atomic.Value
		ready  = make(chan struct{})
	)
	for i, s := range stores {
		me := string(rune('a'+i)) + "-member"
		wg.Go(func() {
			<-ready
			ok, err := s.ClaimFirmwareDownload(t.Context(), "interrupted", "m-gone", me, claimQuiet)
			if err != nil {
				t.Errorf("%s: %v", me, err)
				return
			}
			if ok {
				won.Add(1)
				winner.Store(me)
			}
		})
	}
	close(ready)
	wg.Wait()
	if n := won.Load(); n != 1 {
		t.Fatalf("%d members claimed the download, want exactly 1", n)
	}
	if got := get(t, stores[0], "interrupted").Downloader; got != winner.Load() {
		t.Errorf("downloader = %q, want the winner %v", got, winner.Load())
	}
}

// The downloader's cluster member row written within the bound (it has
// just started again, or left a moment ago and may still be stopping)
// keeps its objects, however quiet their heartbeat; once the row is as
// old as the bound, left or not, they may be claimed. On an engine that
// keeps no member rows (it refuses cluster mode) the heartbeat alone
// decides.
func testClaimWaitsForAFreshMemberRow(t *testing.T, b Backend) {
	// Member rows are stamped with the server's clock: the store's clock
	// follows the real one here.
	now := time.Now().UTC()
	c := NewSettableClock(now.Add(-2 * claimQuiet))
	s := open(t, b, b.Fresh(t), c.Now)
	members, ok := s.(store.ClusterMembers)
	if !ok {
		t.Fatalf("%T does not implement store.ClusterMembers", s)
	}
	row, err := members.JoinMember(t.Context(), "m-down", "sys-1", "127.0.0.1:7000")
	o := object("interrupted", "GB200")
	o.Downloader = "m-down"
	create(t, s, o)
	c.Set(now)
	if errors.Is(err, store.ErrClusterUnsupported) {
		// An engine that keeps no member rows: no row holds the object,
		// and its quiet heartbeat alone lets it go.
		if !claim(t, s, "interrupted", "m-down", "m-a") {
			t.Fatal("a quiet download on an engine without member rows was not claimed")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if claim(t, s, "interrupted", "m-down", "m-a") {
		t.Fatal("claimed a download of a member whose row was just written (a start)")
	}
	row.Left = true
	if err := members.WriteMemberView(t.Context(), row); err != nil {
		t.Fatal(err)
	}
	if claim(t, s, "interrupted", "m-down", "m-a") {
		t.Fatal("claimed a download of a member that left a moment ago")
	}
	c.Set(now.Add(2 * claimQuiet))
	if !claim(t, s, "interrupted", "m-down", "m-a") {
		t.Fatal("a download of a member whose row is older than the bound was not claimed")
	}
}
