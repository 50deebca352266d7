package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/storetest"
)

// TestPostgresRackStreamAppendsCommitInSeqOrder holds one append to a
// rack's stream open, uncommitted: an append to another rack's stream
// commits meanwhile, a second append to the same stream waits for the
// lock until the first commits, and the stream then reads back in Seq
// order, the first's events before the second's. So a reader of a stream
// after Seq n can never miss an event of it with a smaller Seq that
// commits later.
func TestPostgresRackStreamAppendsCommitInSeqOrder(t *testing.T) {
	ctx := t.Context()
	s, err := OpenPostgres(ctx, storetest.TempPostgresDatabase(t), 4, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	appendTo := func(ctx context.Context, stream, kind string) ([]store.Event, error) {
		return update(ctx, s, func(t *tx) ([]store.Event, error) {
			return t.appendStream(ctx, stream, []store.Event{{Kind: kind}})
		})
	}

	held, release := make(chan []store.Event, 1), make(chan struct{})
	firstDone := make(chan error, 1)
	go func() {
		_, err := update(ctx, s, func(t *tx) (struct{}, error) {
			evs, err := t.appendStream(ctx, "rack-1", []store.Event{{Kind: "First"}})
			if err != nil {
				return struct{}{}, err
			}
			held <- evs
			<-release
			return struct{}{}, nil
		})
		firstDone <- err
	}()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	var first []store.Event
	select {
	case first = <-held:
	case err := <-firstDone:
		t.Fatalf("first append: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the first append did not reach its commit within a minute")
	}

	octx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	other, err := appendTo(octx, "rack-2", "Other")
	if err != nil {
		t.Fatalf("an append to another rack's stream while rack-1's is open: %v (it must not wait for rack-1)", err)
	}
	if other[0].Seq <= first[0].Seq {
		t.Errorf("rack-2's seq %d after rack-1's %d", other[0].Seq, first[0].Seq)
	}

	type result struct {
		evs []store.Event
		err error
	}
	secondDone := make(chan result, 1)
	go func() {
		evs, err := appendTo(ctx, "rack-1", "Second")
		secondDone <- result{evs, err}
	}()
	// The second append waits on the stream's lock (pg_locks shows it).
	deadline := time.Now().Add(time.Minute)
	poll := time.NewTicker(10 * time.Millisecond) // asks the server again; a bounded poll
	defer poll.Stop()
	for {
		waiting, err := view(ctx, s, func(t *tx) (int, error) {
			var n int
			err := t.queryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
				AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n)
			return n, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case r := <-secondDone:
			t.Fatalf("the second append to rack-1 returned (%+v, %v) while the first was uncommitted", r.evs, r.err)
		case <-poll.C:
		}
		if time.Now().After(deadline) {
			t.Fatal("the second append to rack-1 never waited on the stream's lock")
		}
	}
	if got, err := s.ReadRackEvents(ctx, "rack-1", 0, 0); err != nil || len(got) != 0 {
		t.Errorf("rack-1 while both appends are uncommitted = %+v, %v; want nothing", got, err)
	}

	close(release)
	released = true
	if err := <-firstDone; err != nil {
		t.Fatalf("first append: %v", err)
	}
	r := <-secondDone
	if r.err != nil {
		t.Fatalf("second append: %v", r.err)
	}
	if r.evs[0].Seq <= first[0].Seq {
		t.Errorf("the second append's seq %d is not above the first's %d", r.evs[0].Seq, first[0].Seq)
	}
	got, err := s.ReadRackEvents(ctx, "rack-1", 0, 0)
	if err != nil || len(got) != 2 || got[0].Kind != "First" || got[1].Kind != "Second" {
		t.Errorf("rack-1 = %+v, %v; want First then Second", got, err)
	}
}
