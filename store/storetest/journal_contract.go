package storetest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/store"
)

// appendEvents appends a batch or fails the test.
func appendEvents(t *testing.T, s store.Journal, events ...store.Event) []store.Event {
	t.Helper()
	got, err := s.AppendEvents(t.Context(), events)
	if err != nil {
		t.Fatalf("append %d events: %v", len(events), err)
	}
	return got
}

// readEvents reads the journal or fails the test.
func readEvents(t *testing.T, s store.Journal, after int64, limit int) []store.Event {
	t.Helper()
	got, err := s.ReadEvents(t.Context(), after, limit)
	if err != nil {
		t.Fatalf("read events after %d: %v", after, err)
	}
	return got
}

// sameEvents reports whether two event lists match, payloads byte for
// byte (an empty payload may read back as nil).
func sameEvents(a, b []store.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Seq != b[i].Seq || a[i].Kind != b[i].Kind || !bytes.Equal(a[i].Data, b[i].Data) || !a[i].Recorded.Equal(b[i].Recorded) {
			return false
		}
	}
	return true
}

func testJournalAppendAndRead(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	if got, err := s.AppendEvents(t.Context(), nil); err != nil || got != nil {
		t.Errorf("empty append = %v, %v", got, err)
	}
	if got := readEvents(t, s, 0, 0); len(got) != 0 {
		t.Fatalf("new journal holds %v", got)
	}
	first := appendEvents(t, s,
		store.Event{Kind: "JobCreated", Data: []byte(`{"job_id":"j1"}`)},
		store.Event{Kind: "JobStarted", Data: []byte{0x00, 0xff, 0x10}},
		store.Event{Kind: "JobCompleted"})
	second := appendEvents(t, s, store.Event{Kind: "JobCreated", Data: []byte("j2")}, store.Event{Kind: "JobFailed", Data: []byte("j2")})
	all := append(append([]store.Event{}, first...), second...)
	for i, e := range all {
		if e.Recorded.IsZero() || (i > 0 && e.Seq <= all[i-1].Seq) {
			t.Errorf("event %d: seq %d recorded %v after seq %d", i, e.Seq, e.Recorded, all[max(i-1, 0)].Seq)
		}
	}
	if !first[0].Recorded.Equal(first[2].Recorded) || !second[0].Recorded.After(first[0].Recorded) {
		t.Errorf("a batch is recorded at one time, a later batch later: %v %v %v", first[0].Recorded, first[2].Recorded, second[0].Recorded)
	}
	if got := readEvents(t, s, 0, 0); !sameEvents(got, all) {
		t.Errorf("read all =\n%+v\nwant\n%+v", got, all)
	}
	if got := readEvents(t, s, all[1].Seq, 2); !sameEvents(got, all[2:4]) {
		t.Errorf("read after %d, limit 2 =\n%+v\nwant\n%+v", all[1].Seq, got, all[2:4])
	}
	if got := readEvents(t, s, all[4].Seq, 10); len(got) != 0 {
		t.Errorf("read after the last = %+v", got)
	}

	_, err := s.AppendEvents(t.Context(), []store.Event{{Kind: "JobCreated"}, {Data: []byte("no kind")}})
	wantErr(t, "append with an event without a kind", err, store.ErrInvalid)
	if got := readEvents(t, s, 0, 0); len(got) != len(all) {
		t.Errorf("a refused batch was partly appended: %d events, want %d", len(got), len(all))
	}
}

// testJournalTailMissesNothing appends from several goroutines while a
// reader tails the journal by sequence number: since appends become
// visible in sequence order, the tail must end up with every event, and
// each batch's events must be consecutive.
func testJournalTailMissesNothing(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx := t.Context()
	const writers, batches, perBatch = 4, 15, 3
	var writing sync.WaitGroup
	for w := range writers {
		writing.Go(func() {
			for i := range batches {
				batch := make([]store.Event, perBatch)
				for j := range batch {
					batch[j] = store.Event{Kind: "Test", Data: fmt.Appendf(nil, "%d/%d/%d", w, i, j)}
				}
				got, err := s.AppendEvents(ctx, batch)
				if err != nil {
					t.Errorf("writer %d: append: %v", w, err)
					return
				}
				for j := 1; j < len(got); j++ {
					if got[j].Seq != got[j-1].Seq+1 {
						t.Errorf("writer %d: a batch's seqs are not consecutive: %d then %d", w, got[j-1].Seq, got[j].Seq)
					}
				}
			}
		})
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
		got, err := s.ReadEvents(ctx, after, 0)
		if err != nil {
			t.Fatalf("tail: %v", err)
		}
		if len(got) > 0 {
			after = got[len(got)-1].Seq
			tail = append(tail, got...)
		}
		if finished {
			break // that read began after every append had returned
		}
	}
	all := readEvents(t, s, 0, 0)
	if len(all) != writers*batches*perBatch {
		t.Fatalf("journal holds %d events, want %d", len(all), writers*batches*perBatch)
	}
	if !sameEvents(tail, all) {
		t.Fatalf("the tail saw %d events, the journal holds %d: an append became visible after a later one", len(tail), len(all))
	}
}

// testJournalCompact replaces the journal with a snapshot: older events
// are gone, the snapshot and what follows it read back in order, sequence
// numbers keep growing, and an empty snapshot or one with a bad event
// changes nothing.
func testJournalCompact(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx := t.Context()
	old := appendEvents(t, s, store.Event{Kind: "A", Data: []byte("1")}, store.Event{Kind: "A", Data: []byte("2")})
	_, err := s.CompactEvents(ctx, nil)
	wantErr(t, "compact with an empty snapshot", err, store.ErrInvalid)
	_, err = s.CompactEvents(ctx, []store.Event{{Kind: "Snap"}, {Data: []byte("no kind")}})
	wantErr(t, "compact with an event without a kind", err, store.ErrInvalid)
	if got := readEvents(t, s, 0, 0); !sameEvents(got, old) {
		t.Fatalf("a refused compaction changed the journal: %+v", got)
	}
	snap, err := s.CompactEvents(ctx, []store.Event{{Kind: "Snap", Data: []byte("s1")}, {Kind: "Snap", Data: []byte("s2")}})
	if err != nil {
		t.Fatalf("compact: %v", err)
	}
	if len(snap) != 2 || snap[0].Seq <= old[1].Seq || snap[1].Seq != snap[0].Seq+1 {
		t.Fatalf("compacted snapshot = %+v after %+v: seqs must grow", snap, old)
	}
	tail := appendEvents(t, s, store.Event{Kind: "A", Data: []byte("3")})
	want := append(append([]store.Event{}, snap...), tail...)
	if got := readEvents(t, s, 0, 0); !sameEvents(got, want) {
		t.Errorf("after compaction the journal holds\n%+v\nwant\n%+v", got, want)
	}
	if tail[0].Seq <= snap[1].Seq {
		t.Errorf("seq after compaction %d, want above %d", tail[0].Seq, snap[1].Seq)
	}
	err = s.Update(ctx, func(tx store.Tx) error {
		if _, err := tx.CompactEvents(ctx, []store.Event{{Kind: "Snap", Data: []byte("rolled back")}}); err != nil {
			return err
		}
		return store.ErrInvalid
	})
	wantErr(t, "a compaction in a failed transaction", err, store.ErrInvalid)
	if got := readEvents(t, s, 0, 0); !sameEvents(got, want) {
		t.Errorf("a rolled-back compaction changed the journal: %+v", got)
	}
}
