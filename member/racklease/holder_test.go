package racklease_test

import (
	"database/sql"
	"errors"
	"net/url"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/member/racklease"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait on a condition: generous on a loaded machine.
const wait = 30 * time.Second

// openStore opens a shared (cluster member's) store on url.
func openStore(t *testing.T, url string) *sqlstore.Store {
	t.Helper()
	s, err := sqlstore.OpenPostgres(t.Context(), url, 4, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// viaProxy returns a store on a fresh database reached through a proxy the
// test can cut or stall, and one reached directly.
func viaProxy(t *testing.T) (proxied, direct *sqlstore.Store, proxy *storetest.CutProxy) {
	t.Helper()
	dbURL := storetest.TempPostgresDatabase(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	direct = openStore(t, dbURL)
	proxy = storetest.NewCutProxy(t, u.Host)
	via := *u
	via.Host = proxy.Addr()
	proxied = openStore(t, via.String())
	return proxied, direct, proxy
}

// acquireWhenFree retries until rack is free (bounded by wait).
func acquireWhenFree(t *testing.T, s store.RackOwners, rack, member string) store.RackLease {
	t.Helper()
	deadline := time.Now().Add(wait)
	poll := time.NewTicker(10 * time.Millisecond) // asks the server again; a bounded poll
	defer poll.Stop()
	for {
		l, err := s.AcquireRack(t.Context(), rack, member, time.Minute)
		if err == nil {
			return l
		}
		if !errors.Is(err, store.ErrRackHeld) || time.Now().After(deadline) {
			t.Fatalf("acquire %s for %s: %v", rack, member, err)
		}
		<-poll.C
	}
}

func TestHolderKeepsTheRackWhileItRenewsAndHandsItOverOnRelease(t *testing.T) {
	s := openStore(t, storetest.TempPostgresDatabase(t))
	// Long enough that a loaded machine does not miss the renewals.
	const ttl = 6 * time.Second
	h, err := racklease.Acquire(t.Context(), s, "rack-1", "m-a", ttl, racklease.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, _ := h.Lease()
	// Wait until the first lease would have ended: the rack is still
	// m-a's, under the same epoch, with a later expiry.
	deadline := time.Now().Add(wait)
	poll := time.NewTicker(100 * time.Millisecond) // reads the store again; a bounded poll
	defer poll.Stop()
	for {
		cur, err := s.RackOwner(t.Context(), "rack-1")
		if err != nil {
			t.Fatal(err)
		}
		if time.Now().After(first.Expires) {
			if cur.Epoch != first.Epoch || cur.Member != "m-a" || !cur.Expires.After(first.Expires) {
				t.Fatalf("lease past the first one's end = %+v, want m-a's epoch %d renewed beyond %s", cur, first.Epoch, first.Expires)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first lease did not end within %s: %+v", wait, first)
		}
		<-poll.C
	}
	if _, err := s.AcquireRack(t.Context(), "rack-1", "m-b", ttl); !errors.Is(err, store.ErrRackHeld) {
		t.Errorf("another member's acquire of a renewed rack = %v, want ErrRackHeld", err)
	}
	if _, acting := h.Lease(); !acting {
		t.Error("a holder that renews stopped acting")
	}

	if err := h.Release(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, acting := h.Lease(); acting {
		t.Error("a released holder still acts")
	}
	select {
	case <-h.Lost():
	default:
		t.Error("Lost is not closed after Release")
	}
	next, err := s.AcquireRack(t.Context(), "rack-1", "m-b", ttl)
	if err != nil || next.Epoch != first.Epoch+1 {
		t.Errorf("acquire after release = %+v, %v; want epoch %d at once", next, err, first.Epoch+1)
	}
}

// TestHolderCutOffStopsActingBeforeAnotherMemberTakesTheRack is the order
// cluster mode rests on: a member that cannot renew its lease stops acting
// on the rack (Lost) before the store lets another member in, and its
// writes under the old epoch are refused afterwards.
func TestHolderCutOffStopsActingBeforeAnotherMemberTakesTheRack(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(*storetest.CutProxy)
	}{
		{"connections cut", (*storetest.CutProxy).Cut},
		{"connections stalled", (*storetest.CutProxy).Stall},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proxied, direct, proxy := viaProxy(t)
			const ttl = 4 * time.Second
			h, err := racklease.Acquire(t.Context(), proxied, "rack-1", "m-a", ttl, racklease.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = h.Release(t.Context()) }()
			old, _ := h.Lease()
			if _, err := direct.AcquireRack(t.Context(), "rack-1", "m-b", ttl); !errors.Is(err, store.ErrRackHeld) {
				t.Fatalf("acquire while m-a holds the rack = %v, want ErrRackHeld", err)
			}

			tc.fail(proxy)
			select {
			case <-h.Lost():
			case <-time.After(wait):
				t.Fatalf("m-a did not stop acting within %s of losing the store", wait)
			}
			lostAt, why := h.LostAt()
			if why == nil {
				t.Error("lost without a reason")
			}
			if _, acting := h.Lease(); acting {
				t.Error("m-a still acts after Lost")
			}

			taken := acquireWhenFree(t, direct, "rack-1", "m-b")
			if !lostAt.Before(taken.Since) {
				t.Errorf("m-a stopped acting at %s, not before m-b took the rack at %s", lostAt, taken.Since)
			}
			if taken.Epoch <= old.Epoch {
				t.Errorf("takeover epoch %d, want above %d", taken.Epoch, old.Epoch)
			}

			proxy.Restore()
			if _, err := proxied.AppendRackEvents(t.Context(), old, []store.Event{{Kind: "Stale"}}); !errors.Is(err, store.ErrNotOwner) {
				t.Errorf("m-a's append under its old epoch = %v, want ErrNotOwner", err)
			}
			if _, err := direct.AppendRackEvents(t.Context(), taken, []store.Event{{Kind: "New"}}); err != nil {
				t.Errorf("m-b's append: %v", err)
			}
		})
	}
}

// TestHolderStopsAtOnceWhenItsRenewalIsRefused: a lease that is no longer
// the rack's (another member took the rack: here, its row is moved on
// directly) is lost at the next renewal, refused by the store, without
// waiting for the member's own deadline.
func TestHolderStopsAtOnceWhenItsRenewalIsRefused(t *testing.T) {
	dbURL := storetest.TempPostgresDatabase(t)
	s := openStore(t, dbURL)
	h, err := racklease.Acquire(t.Context(), s, "rack-1", "m-a", 8*time.Second, racklease.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = h.Release(t.Context()) }()
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), `UPDATE rack_owner SET epoch = epoch + 1, member = 'm-z' WHERE rack_id = 'rack-1'`); err != nil {
		t.Fatal(err)
	}
	select {
	case <-h.Lost():
	case <-time.After(wait):
		t.Fatalf("a refused renewal was not noticed within %s", wait)
	}
	if _, why := h.LostAt(); !errors.Is(why, store.ErrNotOwner) {
		t.Errorf("lost because %v, want store.ErrNotOwner", why)
	}
}
