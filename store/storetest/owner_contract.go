package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
)

// openOwned opens a store on location as the own of a process named by
// host and pid, closing it when the test ends (a store the test closes
// itself may be closed again: the error is then ignored).
func openOwned(t *testing.T, b Backend, location, host string, pid int) store.Store {
	t.Helper()
	s, err := b.OpenOwned(t.Context(), location, host, pid)
	if err != nil {
		t.Fatalf("open store as %s pid %d: %v", host, pid, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// ownerOf returns a store's holding, failing the test when it has none.
func ownerOf(t *testing.T, s store.Store) store.Holder {
	t.Helper()
	o, ok := s.(store.Owned)
	if !ok {
		t.Fatalf("%T opened as an owner does not implement store.Owned", s)
	}
	return o.Owner()
}

func testOwnerRefusesASecondOwner(t *testing.T, b Backend) {
	loc := b.Fresh(t)
	first := openOwned(t, b, loc, "host-a", 1111)
	h := ownerOf(t, first)
	if h.Host != "host-a" || h.PID != 1111 || h.Epoch < 1 || h.Since.IsZero() {
		t.Fatalf("owner = %+v, want host-a pid 1111 with an epoch and a start", h)
	}
	_, err := b.OpenOwned(t.Context(), loc, "host-b", 2222)
	var held *store.HeldError
	if !errors.Is(err, store.ErrHeld) || !errors.As(err, &held) {
		t.Fatalf("second owner's open = %v, want a *store.HeldError", err)
	}
	if held.Holder.Host != "host-a" || held.Holder.PID != 1111 || !held.Holder.Since.Equal(h.Since) {
		t.Errorf("refusal names %+v, want the first owner %+v", held.Holder, h)
	}
	want := "is held by rmsd on host host-a pid 1111 since " + h.Since.UTC().Format(time.RFC3339)
	if !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "store ") {
		t.Errorf("refusal %q does not say %q", err, want)
	}
	// The refusal changed nothing: the first owner still writes.
	appendEvents(t, first, store.Event{Kind: "StillMine"})
	if got := ownerOf(t, first); got.Epoch != h.Epoch {
		t.Errorf("epoch moved from %d to %d on a refused open", h.Epoch, got.Epoch)
	}
}

func testOwnerCloseLetsTheNextIn(t *testing.T, b Backend) {
	loc := b.Fresh(t)
	first := openOwned(t, b, loc, "host-a", 1111)
	appendEvents(t, first, store.Event{Kind: "ByFirst"})
	was := ownerOf(t, first).Epoch
	if err := first.Close(); err != nil {
		t.Fatalf("close the first owner: %v", err)
	}
	next := openOwned(t, b, loc, "host-b", 2222)
	h := ownerOf(t, next)
	if h.Host != "host-b" || h.PID != 2222 || h.Epoch <= was {
		t.Errorf("next owner = %+v, want host-b pid 2222 with an epoch above %d", h, was)
	}
	appendEvents(t, next, store.Event{Kind: "ByNext"})
	if got := readEvents(t, next, 0, 0); len(got) != 2 {
		t.Errorf("journal after the handover: %+v, want both owners' events", got)
	}
	_, err := b.OpenOwned(t.Context(), loc, "host-c", 3333)
	var held *store.HeldError
	if !errors.As(err, &held) || held.Holder.Host != "host-b" || held.Holder.PID != 2222 {
		t.Errorf("a third owner's open = %v, want a refusal naming host-b pid 2222", err)
	}
}

func testOwnerStaleEpochWritesAreRefused(t *testing.T, b Backend) {
	loc := b.Fresh(t)
	stale := openOwned(t, b, loc, "host-a", 1111)
	appendEvents(t, stale, store.Event{Kind: "BeforeTakeover"})
	b.TakeOver(t, loc)

	ctx := t.Context()
	_, err := stale.AppendEvents(ctx, []store.Event{{Kind: "Late"}})
	wantErr(t, "append by a stale owner", err, store.ErrNotOwner)
	_, err = stale.CompactEvents(ctx, []store.Event{{Kind: "LateSnapshot"}})
	wantErr(t, "compaction by a stale owner", err, store.ErrNotOwner)
	_, err = stale.CreateFirmwareObject(ctx, object("LATE_1", "GB200"))
	wantErr(t, "catalog write by a stale owner", err, store.ErrNotOwner)
	ran := false
	err = stale.Update(ctx, func(tx store.Tx) error { ran = true; return nil })
	wantErr(t, "Update by a stale owner", err, store.ErrNotOwner)
	if ran {
		t.Error("a stale owner's Update ran its function")
	}
	// Reads still answer, and show none of the late writes.
	got := readEvents(t, stale, 0, 0)
	if len(got) != 1 || got[0].Kind != "BeforeTakeover" {
		t.Errorf("journal after the stale writes: %+v, want only the event before the takeover", got)
	}
	_, err = stale.GetFirmwareObject(ctx, "LATE_1")
	wantErr(t, "the stale owner's object", err, store.ErrNotFound)
}

// ownerContract lists the subtests of one writer per store; they run only
// for a backend with OpenOwned and TakeOver.
var ownerContract = []struct {
	name string
	fn   func(t *testing.T, b Backend)
}{
	{"OwnerRefusesASecondOwner", testOwnerRefusesASecondOwner},
	{"OwnerCloseLetsTheNextIn", testOwnerCloseLetsTheNextIn},
	{"OwnerStaleEpochWritesAreRefused", testOwnerStaleEpochWritesAreRefused},
}
