package sqlstore_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// ownerWait bounds every wait for an ownership change: the checks run
// every 50 ms, so this is generous on a loaded machine.
const ownerWait = 30 * time.Second

// proxiedOwner opens a fresh PostgreSQL database as its owner through a
// proxy the test can cut, and returns the direct URL, the proxy and the
// ownership changes the store reports.
func proxiedOwner(t *testing.T) (direct string, proxy *storetest.CutProxy, st *sqlstore.Store, changes <-chan sqlstore.OwnershipChange) {
	t.Helper()
	direct = storetest.TempPostgresDatabase(t)
	u, err := url.Parse(direct)
	if err != nil {
		t.Fatal(err)
	}
	proxy = storetest.NewCutProxy(t, u.Host)
	via := *u
	via.Host = proxy.Addr()
	ch := make(chan sqlstore.OwnershipChange, 16)
	st, err = sqlstore.OpenPostgres(t.Context(), via.String(), 4, sqlstore.Options{Owner: &sqlstore.Ownership{
		Host: "host-a", PID: 1111, CheckInterval: 50 * time.Millisecond,
		OnChange: func(c sqlstore.OwnershipChange) { ch <- c },
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return direct, proxy, st, ch
}

// nextChange waits for the next ownership change.
func nextChange(t *testing.T, changes <-chan sqlstore.OwnershipChange, want sqlstore.ChangeKind) sqlstore.OwnershipChange {
	t.Helper()
	select {
	case c := <-changes:
		if c.Kind != want {
			t.Fatalf("ownership change %+v, want kind %d", c, want)
		}
		return c
	case <-time.After(ownerWait):
		t.Fatalf("no ownership change of kind %d within %v", want, ownerWait)
	}
	panic("unreachable")
}

func TestPostgresOwnerCutOffLosesTheLockAndRetakesItWhenNobodyElseDid(t *testing.T) {
	_, proxy, st, changes := proxiedOwner(t)
	before := st.Owner()
	if _, err := st.AppendEvents(t.Context(), []store.Event{{Kind: "Before"}}); err != nil {
		t.Fatal(err)
	}

	proxy.Cut()
	lost := nextChange(t, changes, sqlstore.OwnershipLost)
	if lost.Err == nil || lost.Holder.Epoch != before.Epoch {
		t.Errorf("lost = %+v, want the reason and epoch %d", lost, before.Epoch)
	}
	if _, err := st.AppendEvents(t.Context(), []store.Event{{Kind: "WhileLost"}}); !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("append with the lock lost = %v, want store.ErrNotOwner", err)
	}

	proxy.Restore()
	back := nextChange(t, changes, sqlstore.OwnershipRegained)
	if back.Holder.Epoch <= before.Epoch || back.Holder.Host != "host-a" {
		t.Errorf("regained = %+v, want host-a under an epoch above %d", back, before.Epoch)
	}
	if got := st.Owner().Epoch; got != back.Holder.Epoch {
		t.Errorf("store's epoch %d, reported %d", got, back.Holder.Epoch)
	}
	if _, err := st.AppendEvents(t.Context(), []store.Event{{Kind: "After"}}); err != nil {
		t.Errorf("append once the lock is held again: %v", err)
	}
	evs, err := st.ReadEvents(t.Context(), 0, 0)
	if err != nil || len(evs) != 2 || evs[0].Kind != "Before" || evs[1].Kind != "After" {
		t.Errorf("journal = %+v, %v; want Before and After only", evs, err)
	}
}

func TestPostgresOwnerCutOffWhileAnotherTakesTheStoreStaysRefused(t *testing.T) {
	direct, proxy, st, changes := proxiedOwner(t)
	proxy.Cut()
	nextChange(t, changes, sqlstore.OwnershipLost)

	// The server ends the cut session, and its lock, once it sees the
	// connection closed: until then a second owner is refused.
	var next *sqlstore.Store
	deadline := time.Now().Add(ownerWait)
	poll := time.NewTicker(50 * time.Millisecond) // asks the server again; a bounded poll
	defer poll.Stop()
	for next == nil {
		s, err := sqlstore.OpenPostgres(t.Context(), direct, 4, sqlstore.Options{Owner: &sqlstore.Ownership{Host: "host-b", PID: 2222}})
		switch {
		case err == nil:
			next = s
		case !errors.Is(err, store.ErrHeld):
			t.Fatalf("second owner: %v", err)
		case time.Now().After(deadline):
			t.Fatalf("the cut session's lock was never released: %v", err)
		default:
			<-poll.C
		}
	}
	t.Cleanup(func() { _ = next.Close() })

	proxy.Restore()
	over := nextChange(t, changes, sqlstore.OwnershipTakenOver)
	if over.Holder.Host != "host-b" || over.Holder.PID != 2222 {
		t.Errorf("taken over by %+v, want host-b pid 2222", over.Holder)
	}
	if _, err := st.AppendEvents(t.Context(), []store.Event{{Kind: "Stale"}}); !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("append by the taken-over store = %v, want store.ErrNotOwner", err)
	}
	if _, err := next.AppendEvents(t.Context(), []store.Event{{Kind: "New"}}); err != nil {
		t.Errorf("append by the new owner: %v", err)
	}
	select {
	case c := <-changes:
		t.Errorf("ownership changed again after the takeover: %+v", c)
	default:
	}
}

// TestPostgresOwnerHeldRefusalHidesThePassword: the refusal names the
// holder and the server, never the URL's password.
func TestPostgresOwnerHeldRefusalHidesThePassword(t *testing.T) {
	u, err := url.Parse(storetest.TempPostgresDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "hunter2") // the test server trusts; unused
	first, err := sqlstore.OpenPostgres(t.Context(), u.String(), 2, sqlstore.Options{Owner: &sqlstore.Ownership{}})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = sqlstore.OpenPostgres(context.Background(), u.String(), 2, sqlstore.Options{Owner: &sqlstore.Ownership{}})
	if !errors.Is(err, store.ErrHeld) {
		t.Fatalf("second owner = %v, want store.ErrHeld", err)
	}
	for _, leak := range []string{"hunter2", u.User.Username() + ":"} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("refusal %q shows %q", err, leak)
		}
	}
}
