package sqlstore_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// sharedPostgres opens two stores on one fresh database, as two cluster
// members would (no store-wide owner lock).
func sharedPostgres(t *testing.T) (a, b *sqlstore.Store) {
	t.Helper()
	url := storetest.TempPostgresDatabase(t)
	open := func() *sqlstore.Store {
		s, err := sqlstore.OpenPostgres(t.Context(), url, 4, sqlstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	return open(), open()
}

// untilAcquired retries an acquisition until the lease it waits for has
// ended (bounded by ownerWait).
func untilAcquired(t *testing.T, s *sqlstore.Store, rack, member string, ttl time.Duration) store.RackLease {
	t.Helper()
	deadline := time.Now().Add(ownerWait)
	poll := time.NewTicker(20 * time.Millisecond) // asks the server again; a bounded poll
	defer poll.Stop()
	for {
		l, err := s.AcquireRack(t.Context(), rack, member, ttl)
		if err == nil {
			return l
		}
		if !errors.Is(err, store.ErrRackHeld) || time.Now().After(deadline) {
			t.Fatalf("acquire %s for %s: %v", rack, member, err)
		}
		<-poll.C
	}
}

func TestRackOwnershipAcquireRenewRelease(t *testing.T) {
	a, b := sharedPostgres(t)
	ctx := t.Context()
	if _, err := a.RackOwner(ctx, "rack-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("owner of a rack never owned = %v, want ErrNotFound", err)
	}
	la, err := a.AcquireRack(ctx, "rack-1", "m-a", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if la.Epoch != 1 || la.Member != "m-a" || !la.Expires.After(la.Since) {
		t.Errorf("first lease = %+v, want epoch 1 of m-a", la)
	}
	_, err = b.AcquireRack(ctx, "rack-1", "m-b", time.Minute)
	var held *store.RackHeldError
	if !errors.As(err, &held) || held.Owner.Member != "m-a" || held.Owner.Epoch != 1 {
		t.Fatalf("acquire of an owned rack = %v, want a RackHeldError naming m-a epoch 1", err)
	}
	// Another rack is independent.
	if lb, err := b.AcquireRack(ctx, "rack-2", "m-b", time.Minute); err != nil || lb.Epoch != 1 {
		t.Errorf("acquire of another rack = %+v, %v", lb, err)
	}

	renewed, err := a.RenewRack(ctx, la, 2*time.Minute)
	if err != nil || renewed.Epoch != la.Epoch || !renewed.Expires.After(la.Expires) {
		t.Errorf("renew = %+v, %v; want the same epoch, a later expiry than %s", renewed, err, la.Expires)
	}
	if _, err := b.RenewRack(ctx, store.RackLease{RackID: "rack-1", Member: "m-b", Epoch: 1}, time.Minute); !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("renew by a member that is not the owner = %v, want ErrNotOwner", err)
	}
	if _, err := a.AppendRackEvents(ctx, renewed, []store.Event{{Kind: "ByOwner"}}); err != nil {
		t.Errorf("fenced append by the owner: %v", err)
	}

	if err := a.ReleaseRack(ctx, renewed); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AppendRackEvents(ctx, renewed, []store.Event{{Kind: "AfterRelease"}}); !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("fenced append after release = %v, want ErrNotOwner", err)
	}
	lb, err := b.AcquireRack(ctx, "rack-1", "m-b", time.Minute)
	if err != nil || lb.Epoch != 2 || lb.Member != "m-b" {
		t.Fatalf("acquire after release = %+v, %v; want epoch 2 of m-b at once", lb, err)
	}
	if got, err := a.RackOwner(ctx, "rack-1"); err != nil || got.Epoch != 2 || got.Member != "m-b" {
		t.Errorf("owner = %+v, %v", got, err)
	}
	// A release of a lease no longer the rack's changes nothing.
	if err := a.ReleaseRack(ctx, renewed); err != nil {
		t.Errorf("release of a stale lease: %v", err)
	}
	if _, err := b.AppendRackEvents(ctx, lb, []store.Event{{Kind: "ByNewOwner"}}); err != nil {
		t.Errorf("fenced append by the new owner after a stale release: %v", err)
	}
	evs, err := a.ReadRackEvents(ctx, "rack-1", 0, 0)
	if err != nil || len(evs) != 2 || evs[0].Kind != "ByOwner" || evs[1].Kind != "ByNewOwner" {
		t.Errorf("journal = %+v, %v; want ByOwner and ByNewOwner only", evs, err)
	}
}

func TestRackOwnershipTakeOverAfterExpiryFencesTheOldEpoch(t *testing.T) {
	a, b := sharedPostgres(t)
	ctx := t.Context()
	const short = 300 * time.Millisecond
	la, err := a.AcquireRack(ctx, "rack-1", "m-a", short)
	if err != nil {
		t.Fatal(err)
	}
	lb := untilAcquired(t, b, "rack-1", "m-b", time.Minute)
	if lb.Epoch != la.Epoch+1 || !lb.Since.After(la.Expires) && !lb.Since.Equal(la.Expires) {
		t.Errorf("takeover = %+v after %+v: want the next epoch, once the first lease had ended", lb, la)
	}
	if _, err := a.RenewRack(ctx, la, time.Minute); !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("renew of the taken-over lease = %v, want ErrNotOwner", err)
	}
	err = a.UpdateRack(ctx, la, func(tx store.Tx) error {
		t.Error("a stale epoch's update ran")
		return nil
	})
	if !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("update under the stale epoch = %v, want ErrNotOwner", err)
	}
	if _, err := a.AppendRackEvents(ctx, la, []store.Event{{Kind: "Stale"}}); !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("append under the stale epoch = %v, want ErrNotOwner", err)
	}
	if evs, err := a.ReadRackEvents(ctx, "rack-1", 0, 0); err != nil || len(evs) != 0 {
		t.Errorf("journal = %+v, %v; want nothing from the stale owner", evs, err)
	}
	// The same member acquiring again (a restart) moves to a new epoch
	// and fences its own earlier one.
	again, err := b.AcquireRack(ctx, "rack-1", "m-b", time.Minute)
	if err != nil || again.Epoch != lb.Epoch+1 {
		t.Fatalf("re-acquire by the owner = %+v, %v", again, err)
	}
	if _, err := b.AppendRackEvents(ctx, lb, []store.Event{{Kind: "Earlier"}}); !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("append under the member's earlier epoch = %v, want ErrNotOwner", err)
	}
}

func TestRackOwnershipEpochsStrictlyIncreaseUnderContention(t *testing.T) {
	a, b := sharedPostgres(t)
	ctx := t.Context()
	type result struct {
		l   store.RackLease
		err error
	}
	const rounds = 10
	var last int64
	for i := range rounds {
		results := make(chan result, 2)
		for _, s := range []*sqlstore.Store{a, b} {
			member := "m-a"
			if s == b {
				member = "m-b"
			}
			go func() {
				l, err := s.AcquireRack(ctx, "rack-1", member, time.Minute)
				results <- result{l, err}
			}()
		}
		var won []store.RackLease
		for range 2 {
			r := <-results
			switch {
			case r.err == nil:
				won = append(won, r.l)
			case !errors.Is(r.err, store.ErrRackHeld):
				t.Fatalf("round %d: %v", i, r.err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d members acquired the rack at once: %+v", i, len(won), won)
		}
		if won[0].Epoch <= last {
			t.Fatalf("round %d: epoch %d after %d", i, won[0].Epoch, last)
		}
		last = won[0].Epoch
		if err := a.ReleaseRack(ctx, won[0]); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRackOwnershipRefusedOnSQLite(t *testing.T) {
	s, err := sqlstore.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "rmsd.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.AcquireRack(t.Context(), "rack-1", "m-a", time.Minute); !errors.Is(err, store.ErrClusterUnsupported) {
		t.Errorf("acquire on SQLite = %v, want ErrClusterUnsupported", err)
	}
	if _, err := s.AppendRackEvents(t.Context(), store.RackLease{RackID: "rack-1", Epoch: 1}, []store.Event{{Kind: "X"}}); !errors.Is(err, store.ErrClusterUnsupported) {
		t.Errorf("fenced append on SQLite = %v, want ErrClusterUnsupported", err)
	}
}
