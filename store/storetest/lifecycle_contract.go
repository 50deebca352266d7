package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/rmsd/rmsd/store"
)

var errAbort = errors.New("storetest: abort the transaction")

// writeEverything changes every part of the store in tx (or in a store).
func writeEverything(t *testing.T, s store.Tx, id string) {
	t.Helper()
	ctx := t.Context()
	create(t, s, object(id, "GB200"))
	if err := s.SetArtifactStatus(ctx, id, "cpld.fwpkg", store.ArtifactStatus{State: store.ArtifactDownloading}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetDefaultFirmwareObject(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RecordApply(ctx, store.ApplyRecord{ObjectID: id, RackID: "rack-1"}); err != nil {
		t.Fatal(err)
	}
	appendEvents(t, s, store.Event{Kind: "Applied", Data: []byte(id)})
}

// wantNothingOf checks that nothing writeEverything(id) does is visible.
func wantNothingOf(t *testing.T, s store.Store, id string) {
	t.Helper()
	ctx := t.Context()
	_, err := s.GetFirmwareObject(ctx, id)
	wantErr(t, "object of a rolled back transaction", err, store.ErrNotFound)
	_, err = s.DefaultFirmwareObject(ctx, "GB200")
	wantErr(t, "default of a rolled back transaction", err, store.ErrNotFound)
	if h, _ := s.ListApplyHistory(ctx, store.HistoryFilter{ObjectID: id}); len(h) != 0 {
		t.Errorf("history of a rolled back transaction: %+v", h)
	}
	if e := readEvents(t, s, 0, 0); len(e) != 0 {
		t.Errorf("events of a rolled back transaction: %+v", e)
	}
}

func testUpdateCommitsAllOrNothing(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx := t.Context()
	err := s.Update(ctx, func(tx store.Tx) error {
		writeEverything(t, tx, "TX_1")
		if got := get(t, tx, "TX_1"); !got.IsDefault {
			t.Errorf("a transaction does not see its own writes: %+v", got)
		}
		return errAbort
	})
	if err != errAbort {
		t.Fatalf("Update = %v, want fn's error as it is", err)
	}
	wantNothingOf(t, s, "TX_1")

	// A failing call inside fn, returned, undoes the calls before it.
	create(t, s, object("TAKEN_1", "GB300"))
	err = s.Update(ctx, func(tx store.Tx) error {
		writeEverything(t, tx, "TX_1")
		_, err := tx.CreateFirmwareObject(ctx, object("TAKEN_1", "GB300"))
		return err
	})
	wantErr(t, "Update with a taken id", err, store.ErrExists)
	wantNothingOf(t, s, "TX_1")

	if err := s.Update(ctx, func(tx store.Tx) error { writeEverything(t, tx, "TX_1"); return nil }); err != nil {
		t.Fatalf("Update: %v", err)
	}
	got := get(t, s, "TX_1")
	if !got.IsDefault || got.Artifacts[1].State != store.ArtifactDownloading {
		t.Errorf("committed object = %+v", got)
	}
	if h, _ := s.ListApplyHistory(ctx, store.HistoryFilter{ObjectID: "TX_1"}); len(h) != 1 {
		t.Errorf("committed history = %+v", h)
	}
	if e := readEvents(t, s, 0, 0); len(e) != 1 || string(e[0].Data) != "TX_1" {
		t.Errorf("committed events = %+v", e)
	}
}

func testUpdateRollsBackWhenTheContextEnds(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	err := s.Update(ctx, func(tx store.Tx) error { ran = true; return nil })
	if err == nil || ran {
		t.Errorf("Update with an ended context = %v (fn ran: %v), want an error before fn", err, ran)
	}

	ctx, cancel = context.WithCancel(t.Context())
	err = s.Update(ctx, func(tx store.Tx) error {
		create(t, tx, object("CTX_1", "GB200"))
		cancel()
		return nil
	})
	if err == nil {
		t.Error("Update whose context ended before the commit succeeded")
	}
	_, err = s.GetFirmwareObject(t.Context(), "CTX_1")
	wantErr(t, "object of a transaction whose context ended", err, store.ErrNotFound)
	create(t, s, object("AFTER_1", "GB200")) // the store still writes
}

func testUpdateRollsBackOnPanic(t *testing.T, b Backend) {
	s, _ := openFresh(t, b)
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Errorf("recovered %v, want the panic to pass through Update", r)
			}
		}()
		_ = s.Update(t.Context(), func(tx store.Tx) error {
			writeEverything(t, tx, "PANIC_1")
			panic("boom")
		})
	}()
	wantNothingOf(t, s, "PANIC_1")
	writeEverything(t, s, "AFTER_1") // the store still writes
}

func testReopenKeepsData(t *testing.T, b Backend) {
	location := b.Fresh(t)
	c := newClock()
	first, err := b.Open(t.Context(), location, c.Now)
	if err != nil {
		t.Fatal(err)
	}
	writeEverything(t, first, "KEEP_1")
	obj := get(t, first, "KEEP_1")
	history, _ := first.ListApplyHistory(t.Context(), store.HistoryFilter{})
	events := readEvents(t, first, 0, 0)
	info := first.Info()
	if info.Engine == "" || info.Location == "" || info.SchemaVersion < 1 {
		t.Errorf("info = %+v", info)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	second := open(t, b, location, c.Now)
	if got := get(t, second, "KEEP_1"); !reflect.DeepEqual(got, obj) {
		t.Errorf("after reopening:\n%+v\nwant\n%+v", got, obj)
	}
	if got, _ := second.ListApplyHistory(t.Context(), store.HistoryFilter{}); !reflect.DeepEqual(got, history) {
		t.Errorf("history after reopening = %+v, want %+v", got, history)
	}
	if got := readEvents(t, second, 0, 0); !sameEvents(got, events) {
		t.Errorf("events after reopening = %+v, want %+v", got, events)
	}
	if got := second.Info(); got != info {
		t.Errorf("info after reopening = %+v, want %+v", got, info)
	}
	next := appendEvents(t, second, store.Event{Kind: "Next"})
	if next[0].Seq <= events[len(events)-1].Seq {
		t.Errorf("seq %d after reopening reuses one at or below %d", next[0].Seq, events[len(events)-1].Seq)
	}
}

func testMigrationsAppliedTwiceAreANoOp(t *testing.T, b Backend) {
	location := b.Fresh(t)
	c := newClock()
	first := open(t, b, location, c.Now)
	writeEverything(t, first, "TWICE_1")
	before := get(t, first, "TWICE_1")

	// A second store on the same storage, while the first is open, finds
	// the schema up to date and the data untouched.
	second := open(t, b, location, c.Now)
	if second.Info().SchemaVersion != first.Info().SchemaVersion {
		t.Errorf("schema version %d, then %d", first.Info().SchemaVersion, second.Info().SchemaVersion)
	}
	if got := get(t, second, "TWICE_1"); !reflect.DeepEqual(got, before) {
		t.Errorf("second store reads\n%+v\nwant\n%+v", got, before)
	}
	create(t, second, object("TWICE_2", "GB300"))
	if got := ids(list(t, first, store.ObjectFilter{})); !reflect.DeepEqual(got, []string{"TWICE_2", "TWICE_1"}) {
		t.Errorf("first store lists %v after the second wrote", got)
	}
}

func testConcurrentOpensOfFreshStorage(t *testing.T, b Backend) {
	location := b.Fresh(t)
	c := newClock()
	const n = 3
	stores := make([]store.Store, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { stores[i], errs[i] = b.Open(t.Context(), location, c.Now) })
	}
	wg.Wait()
	// A failed open may hand back a typed nil in a non-nil store.Store:
	// only errs says which stores opened.
	first := -1
	for i, s := range stores {
		if errs[i] != nil {
			t.Errorf("open %d: %v", i, errs[i])
			continue
		}
		t.Cleanup(func() { _ = s.Close() })
		create(t, s, object(fmt.Sprintf("OPEN_%d", i), "GB200"))
		if first < 0 {
			first = i
		}
		if got, want := s.Info().SchemaVersion, stores[first].Info().SchemaVersion; got != want {
			t.Errorf("store %d has schema version %d, store %d %d", i, got, first, want)
		}
	}
	if first < 0 {
		t.FailNow()
	}
	if got := list(t, stores[first], store.ObjectFilter{}); len(got) != n {
		t.Errorf("the stores wrote %d objects, want %d", len(got), n)
	}
}

// testConcurrentWritersInTwoStores writes from several goroutines through
// two stores on the same storage (as two processes would) and checks that
// every write is there, once.
func testConcurrentWritersInTwoStores(t *testing.T, b Backend) {
	location := b.Fresh(t)
	c := newClock()
	stores := []store.Store{open(t, b, location, c.Now), open(t, b, location, c.Now)}
	ctx := t.Context()
	const perStore, rounds = 3, 10
	var wg sync.WaitGroup
	for si, s := range stores {
		for g := range perStore {
			wg.Go(func() {
				for i := range rounds {
					id := fmt.Sprintf("W%d_%d_%d", si, g, i)
					err := s.Update(ctx, func(tx store.Tx) error {
						if _, err := tx.CreateFirmwareObject(ctx, object(id, "GB200")); err != nil {
							return err
						}
						_, err := tx.AppendEvents(ctx, []store.Event{{Kind: "Created", Data: []byte(id)}})
						return err
					})
					if err == nil {
						err = s.SetArtifactStatus(ctx, id, "cpld.fwpkg", store.ArtifactStatus{State: store.ArtifactReady, LocalPath: "/fw/" + id})
					}
					if err == nil {
						_, err = s.RecordApply(ctx, store.ApplyRecord{ObjectID: id, RackID: fmt.Sprintf("rack-%d", si)})
					}
					if err == nil {
						_, err = s.SetDefaultFirmwareObject(ctx, id)
					}
					if err != nil {
						t.Errorf("writer %s: %v", id, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()

	const total = 2 * perStore * rounds
	objs := list(t, stores[1], store.ObjectFilter{})
	if len(objs) != total {
		t.Fatalf("%d objects, want %d", len(objs), total)
	}
	for _, o := range objs {
		if a := o.Artifacts[1]; a.State != store.ArtifactReady || a.LocalPath != "/fw/"+o.ID {
			t.Errorf("%s: artifact %+v", o.ID, a)
		}
	}
	if marked := defaultsOf(objs); len(marked) != 1 {
		t.Errorf("%d defaults of GB200: %v", len(marked), marked)
	}
	history, err := stores[0].ListApplyHistory(ctx, store.HistoryFilter{})
	if err != nil || len(history) != total {
		t.Fatalf("history: %d records, %v; want %d", len(history), err, total)
	}
	seqs := map[int64]bool{}
	for _, r := range history {
		seqs[r.Seq] = true
	}
	events := readEvents(t, stores[0], 0, 0)
	for _, e := range events {
		seqs[-e.Seq] = true
	}
	if len(events) != total || len(seqs) != 2*total {
		t.Errorf("%d events, %d distinct sequence numbers; want %d events and every seq once", len(events), len(seqs), total)
	}
}

func testClosedStoreRefusesCalls(t *testing.T, b Backend) {
	s, err := b.Open(t.Context(), b.Fresh(t), newClock().Now)
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, object("CLOSED_1", "GB200"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetFirmwareObject(t.Context(), "CLOSED_1"); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("get on a closed store = %v, want a storage error", err)
	}
	if err := s.Update(t.Context(), func(store.Tx) error { return nil }); err == nil {
		t.Error("Update on a closed store succeeded")
	}
}
