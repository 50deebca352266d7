package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
)

// The rack journals of cluster mode (store.RackOwners' streams), on the
// engines that share a store between members. An engine that refuses
// cluster mode (store.ErrClusterUnsupported) must refuse every call.

// rackJournalContract lists the rack journal's behaviours.
var rackJournalContract = []struct {
	name string
	fn   func(t *testing.T, b Backend)
}{
	{"RackJournalStreamsAreIsolated", testRackJournalStreamsAreIsolated},
	{"RackJournalRefusesStaleAndEndedLeases", testRackJournalRefusesStaleAndEndedLeases},
	{"RackJournalCompactionKeepsOtherStreams", testRackJournalCompactionKeepsOtherStreams},
	{"RackJournalJobRackAndPrune", testRackJournalJobRackAndPrune},
	{"RackJournalTailMissesNothingUnderConcurrentStreams", testRackJournalTailMissesNothing},
}

// rackOwners returns s's rack ownership; false when the engine cannot be
// shared, after checking that it refuses every rack journal call (the
// test then has nothing more to check).
func rackOwners(t *testing.T, s store.Store) (store.RackOwners, bool) {
	t.Helper()
	ro, ok := s.(store.RackOwners)
	if !ok {
		t.Fatalf("%T does not implement store.RackOwners", s)
	}
	_, err := ro.AcquireRack(t.Context(), "rack-1", "m-a", time.Minute)
	if !errors.Is(err, store.ErrClusterUnsupported) {
		if err != nil {
			t.Fatalf("acquire a rack: %v", err)
		}
		return ro, true
	}
	ctx := t.Context()
	lease := store.RackLease{RackID: "rack-1", Member: "m-a", Epoch: 1}
	_, err = ro.AppendRackEvents(ctx, lease, []store.Event{{Kind: "X"}})
	wantErr(t, "fenced append", err, store.ErrClusterUnsupported)
	_, err = ro.ReadRackEvents(ctx, "rack-1", 0, 0)
	wantErr(t, "read a rack's stream", err, store.ErrClusterUnsupported)
	_, err = ro.CompactRackEvents(ctx, lease, []store.Event{{Kind: "X"}})
	wantErr(t, "compact a rack's stream", err, store.ErrClusterUnsupported)
	_, err = ro.JobRack(ctx, "job-1")
	wantErr(t, "a job's rack", err, store.ErrClusterUnsupported)
	_, err = ro.PruneJobRacks(ctx, time.Now())
	wantErr(t, "prune job racks", err, store.ErrClusterUnsupported)
	return nil, false
}

// readRack reads a rack's stream or fails the test.
func readRack(t *testing.T, ro store.RackOwners, rack string, after int64, limit int) []store.Event {
	t.Helper()
	got, err := ro.ReadRackEvents(t.Context(), rack, after, limit)
	if err != nil {
		t.Fatalf("read rack %s after %d: %v", rack, after, err)
	}
	return got
}

// appendRack appends to a rack's stream under lease or fails the test.
func appendRack(t *testing.T, ro store.RackOwners, lease store.RackLease, events ...store.Event) []store.Event {
	t.Helper()
	got, err := ro.AppendRackEvents(t.Context(), lease, events)
	if err != nil {
		t.Fatalf("append %d events to rack %s: %v", len(events), lease.RackID, err)
	}
	return got
}

// acquire takes a rack or fails the test.
func acquire(t *testing.T, ro store.RackOwners, rack, member string) store.RackLease {
	t.Helper()
	l, err := ro.AcquireRack(t.Context(), rack, member, time.Minute)
	if err != nil {
		t.Fatalf("acquire %s for %s: %v", rack, member, err)
	}
	return l
}

func testRackJournalStreamsAreIsolated(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ro, ok := rackOwners(t, s)
	if !ok {
		return
	}
	ctx := t.Context()
	r1 := acquire(t, ro, "rack-1", "m-a")
	r2 := acquire(t, ro, "rack-2", "m-b")
	a := appendRack(t, ro, r1, store.Event{Kind: "A", Data: []byte("1")}, store.Event{Kind: "A", Data: []byte("2")})
	global := appendEvents(t, s, store.Event{Kind: "G", Data: []byte("g")})
	bb := appendRack(t, ro, r2, store.Event{Kind: "B", Data: []byte("1")})
	a = append(a, appendRack(t, ro, r1, store.Event{Kind: "A", Data: []byte("3")})...)
	if a[1].Seq <= a[0].Seq || global[0].Seq <= a[1].Seq || bb[0].Seq <= global[0].Seq || a[2].Seq <= bb[0].Seq {
		t.Errorf("seqs %d %d, %d, %d, %d: one increasing series across streams", a[0].Seq, a[1].Seq, global[0].Seq, bb[0].Seq, a[2].Seq)
	}
	if got := readRack(t, ro, "rack-1", 0, 0); !sameEvents(got, a) {
		t.Errorf("rack-1's stream = %+v, want %+v", got, a)
	}
	if got := readRack(t, ro, "rack-2", 0, 0); !sameEvents(got, bb) {
		t.Errorf("rack-2's stream = %+v, want %+v", got, bb)
	}
	if got := readEvents(t, s, 0, 0); !sameEvents(got, global) {
		t.Errorf("the single-process journal = %+v, want only %+v", got, global)
	}
	if got := readRack(t, ro, "rack-1", a[0].Seq, 1); !sameEvents(got, a[1:2]) {
		t.Errorf("rack-1 after %d, limit 1 = %+v, want %+v", a[0].Seq, got, a[1:2])
	}
	if got := readRack(t, ro, "rack-1", a[1].Seq, 0); !sameEvents(got, a[2:]) {
		t.Errorf("rack-1 after %d = %+v, want %+v", a[1].Seq, got, a[2:])
	}
	if got := readRack(t, ro, "rack-9", 0, 0); len(got) != 0 {
		t.Errorf("a rack never written reads %+v", got)
	}
	// The empty rack id is the single-process journal, not a rack's.
	if _, err := ro.ReadRackEvents(ctx, "", 0, 0); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("read of the empty rack id = %v, want ErrInvalid (that is the single-process journal)", err)
	}
}

func testRackJournalRefusesStaleAndEndedLeases(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ro, ok := rackOwners(t, s)
	if !ok {
		return
	}
	ctx := t.Context()
	old := acquire(t, ro, "rack-1", "m-a")
	kept := appendRack(t, ro, old, store.Event{Kind: "ByOld", Jobs: []string{"job-old"}})
	if err := ro.ReleaseRack(ctx, old); err != nil {
		t.Fatal(err)
	}
	// An ended lease.
	_, err := ro.AppendRackEvents(ctx, old, []store.Event{{Kind: "AfterRelease", Jobs: []string{"job-ended"}}})
	wantErr(t, "append under a released lease", err, store.ErrNotOwner)
	_, err = ro.CompactRackEvents(ctx, old, []store.Event{{Kind: "SnapAfterRelease", Jobs: []string{"job-ended"}}})
	wantErr(t, "compact under a released lease", err, store.ErrNotOwner)
	// A stale epoch: another member owns the rack now.
	cur := acquire(t, ro, "rack-1", "m-b")
	if cur.Epoch <= old.Epoch {
		t.Fatalf("new epoch %d after %d", cur.Epoch, old.Epoch)
	}
	_, err = ro.AppendRackEvents(ctx, old, []store.Event{{Kind: "Stale", Jobs: []string{"job-stale"}}})
	wantErr(t, "append under a stale epoch", err, store.ErrNotOwner)
	_, err = ro.CompactRackEvents(ctx, old, []store.Event{{Kind: "StaleSnap", Jobs: []string{"job-stale"}}})
	wantErr(t, "compact under a stale epoch", err, store.ErrNotOwner)
	// A rack never owned.
	_, err = ro.AppendRackEvents(ctx, store.RackLease{RackID: "rack-7", Member: "m-a", Epoch: 1}, []store.Event{{Kind: "Nobody", Jobs: []string{"job-nobody"}}})
	wantErr(t, "append to a rack never owned", err, store.ErrNotOwner)

	if got := readRack(t, ro, "rack-1", 0, 0); !sameEvents(got, kept) {
		t.Errorf("rack-1's stream = %+v; the refused writes must leave only %+v", got, kept)
	}
	if got := readRack(t, ro, "rack-7", 0, 0); len(got) != 0 {
		t.Errorf("rack-7's stream = %+v, want nothing", got)
	}
	for _, job := range []string{"job-ended", "job-stale", "job-nobody"} {
		if rack, err := ro.JobRack(ctx, job); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("rack of %s, named only by refused writes = %q, %v; want ErrNotFound", job, rack, err)
		}
	}
	if rack, err := ro.JobRack(ctx, "job-old"); err != nil || rack != "rack-1" {
		t.Errorf("rack of job-old = %q, %v; want rack-1", rack, err)
	}
	// The owner writes on after the stale attempts.
	appendRack(t, ro, cur, store.Event{Kind: "ByNew"})
}

func testRackJournalCompactionKeepsOtherStreams(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ro, ok := rackOwners(t, s)
	if !ok {
		return
	}
	ctx := t.Context()
	r1 := acquire(t, ro, "rack-1", "m-a")
	r2 := acquire(t, ro, "rack-2", "m-a")
	appendRack(t, ro, r1, store.Event{Kind: "A", Data: []byte("1")}, store.Event{Kind: "A", Data: []byte("2")})
	two := appendRack(t, ro, r2, store.Event{Kind: "B", Data: []byte("1")})
	global := appendEvents(t, s, store.Event{Kind: "G", Data: []byte("1")})

	_, err := ro.CompactRackEvents(ctx, r1, nil)
	wantErr(t, "compact a rack with an empty snapshot", err, store.ErrInvalid)
	snap, err := ro.CompactRackEvents(ctx, r1, []store.Event{{Kind: "Snap", Data: []byte("s")}})
	if err != nil {
		t.Fatalf("compact rack-1: %v", err)
	}
	tail := appendRack(t, ro, r1, store.Event{Kind: "A", Data: []byte("3")})
	if got, want := readRack(t, ro, "rack-1", 0, 0), append(snap, tail...); !sameEvents(got, want) {
		t.Errorf("rack-1 after compaction = %+v, want %+v", got, want)
	}
	if got := readRack(t, ro, "rack-2", 0, 0); !sameEvents(got, two) {
		t.Errorf("rack-2 after rack-1's compaction = %+v, want %+v", got, two)
	}
	if got := readEvents(t, s, 0, 0); !sameEvents(got, global) {
		t.Errorf("the single-process journal after rack-1's compaction = %+v, want %+v", got, global)
	}
	// The single-process journal's compaction leaves the racks' streams.
	if _, err := s.CompactEvents(ctx, []store.Event{{Kind: "GSnap"}}); err != nil {
		t.Fatalf("compact the single-process journal: %v", err)
	}
	if got := readRack(t, ro, "rack-2", 0, 0); !sameEvents(got, two) {
		t.Errorf("rack-2 after the single-process compaction = %+v, want %+v", got, two)
	}
	if got := readRack(t, ro, "rack-1", 0, 0); len(got) != 2 {
		t.Errorf("rack-1 after the single-process compaction = %+v, want its snapshot and tail", got)
	}
}

func testRackJournalJobRackAndPrune(t *testing.T, b Backend) {
	clock := NewSettableClock(time.Date(2026, 3, 4, 5, 0, 0, 0, time.UTC))
	s := open(t, b, b.Fresh(t), clock.Now)
	ro, ok := rackOwners(t, s)
	if !ok {
		return
	}
	ctx := t.Context()
	r1 := acquire(t, ro, "rack-1", "m-a")
	r2 := acquire(t, ro, "rack-2", "m-b")
	if _, err := ro.JobRack(ctx, "job-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rack of a job never recorded = %v, want ErrNotFound", err)
	}
	appendRack(t, ro, r1, store.Event{Kind: "Row", Jobs: []string{"job-1", "job-2"}}, store.Event{Kind: "Row"})
	clock.Set(clock.Now().Add(time.Hour))
	appendRack(t, ro, r2, store.Event{Kind: "Row", Jobs: []string{"job-3"}})
	// A snapshot naming a job already recorded keeps its first rack; one
	// naming a new job records it.
	if _, err := ro.CompactRackEvents(ctx, r2, []store.Event{{Kind: "Snap", Jobs: []string{"job-1", "job-3", "job-4"}}}); err != nil {
		t.Fatal(err)
	}
	// The single-process journal records no job's rack.
	appendEvents(t, s, store.Event{Kind: "Row", Jobs: []string{"job-9"}})
	for job, want := range map[string]string{"job-1": "rack-1", "job-2": "rack-1", "job-3": "rack-2", "job-4": "rack-2"} {
		if got, err := ro.JobRack(ctx, job); err != nil || got != want {
			t.Errorf("rack of %s = %q, %v; want %s", job, got, err, want)
		}
	}
	if _, err := ro.JobRack(ctx, "job-9"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rack of a job of the single-process journal = %v, want ErrNotFound", err)
	}

	n, err := ro.PruneJobRacks(ctx, clock.Now().Add(-30*time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("prune the first hour's records = %d, %v; want 2 (job-1, job-2)", n, err)
	}
	for _, job := range []string{"job-1", "job-2"} {
		if _, err := ro.JobRack(ctx, job); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("rack of pruned %s = %v, want ErrNotFound", job, err)
		}
	}
	for _, job := range []string{"job-3", "job-4"} {
		if got, err := ro.JobRack(ctx, job); err != nil || got != "rack-2" {
			t.Errorf("rack of %s after the prune = %q, %v; want rack-2", job, got, err)
		}
	}
	if n, err := ro.PruneJobRacks(ctx, clock.Now().Add(-30*time.Minute)); err != nil || n != 0 {
		t.Errorf("the same prune again = %d, %v; want 0", n, err)
	}
	if got := readRack(t, ro, "rack-1", 0, 0); len(got) != 2 {
		t.Errorf("pruning job racks changed rack-1's stream: %+v", got)
	}
}

// testRackJournalTailMissesNothing appends to two racks' streams from
// several goroutines each while a reader tails one stream by sequence
// number: the tail must end up with every event of its stream and no
// other, in order.
func testRackJournalTailMissesNothing(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ro, ok := rackOwners(t, s)
	if !ok {
		return
	}
	ctx := t.Context()
	leases := []store.RackLease{acquire(t, ro, "rack-1", "m-a"), acquire(t, ro, "rack-2", "m-b")}
	const writersPerRack, batches, perBatch = 3, 12, 3
	var writing sync.WaitGroup
	for _, l := range leases {
		for w := range writersPerRack {
			writing.Go(func() {
				for i := range batches {
					batch := make([]store.Event, perBatch)
					for j := range batch {
						batch[j] = store.Event{Kind: l.RackID, Data: fmt.Appendf(nil, "%d/%d/%d", w, i, j)}
					}
					if _, err := ro.AppendRackEvents(ctx, l, batch); err != nil {
						t.Errorf("%s writer %d: append: %v", l.RackID, w, err)
						return
					}
				}
			})
		}
	}
	written := make(chan struct{})
	go func() { writing.Wait(); close(written) }()

	var tail []store.Event
	var after int64
	for finished := false; ; {
		select {
		case <-written:
			finished = true
		default:
		}
		got := readRack(t, ro, "rack-1", after, 0)
		if len(got) > 0 {
			after = got[len(got)-1].Seq
			tail = append(tail, got...)
		}
		if finished {
			break // that read began after every append had returned
		}
	}
	all := readRack(t, ro, "rack-1", 0, 0)
	if len(all) != writersPerRack*batches*perBatch {
		t.Fatalf("rack-1's stream holds %d events, want %d", len(all), writersPerRack*batches*perBatch)
	}
	for _, e := range all {
		if e.Kind != "rack-1" {
			t.Fatalf("rack-1's stream holds an event of %s", e.Kind)
		}
	}
	if !sameEvents(tail, all) {
		t.Fatalf("the tail saw %d events, rack-1's stream holds %d: an append became visible after a later one", len(tail), len(all))
	}
}
