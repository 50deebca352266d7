package actors

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
	"github.com/rmsd/rmsd/test/syncbuf"
)

// TestJournalStoreTakenOverRefusesJobsAndSaysSo: once another rmsd has
// taken the store over (a newer epoch in its owner record), this one's
// journal writes are refused, so admission answers ErrStoreUnavailable,
// and the log says at error level that the store's ownership is lost.
func TestJournalStoreTakenOverRefusesJobsAndSaysSo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rmsd.db")
	st := openJournalStore(t, func(ctx context.Context) (store.Store, error) {
		return sqlstore.OpenSQLite(ctx, path, sqlstore.Options{Owner: &sqlstore.Ownership{}})
	})
	var logs syncbuf.Buffer
	e, _ := newEngine(t, Options{Journal: st, Logger: zerolog.New(&logs)})
	done := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "a"}, completes("Completed", "{}"))
	waitTerminal(t, e, done.ID)

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(testCtx(t), `UPDATE store_owner SET epoch = epoch + 1, host = 'host-z', pid = 9999`); err != nil {
		t.Fatalf("take the store over: %v", err)
	}

	for _, node := range []string{"b", "c"} { // the first fails on its write, the next is refused at once
		_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: node}, blocks, nil)
		if !errors.Is(err, messages.ErrStoreUnavailable) {
			t.Fatalf("create on node %s after the takeover: %v, want ErrStoreUnavailable", node, err)
		}
	}
	eventually(t, "the ownership loss logged", func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, `"level":"error"`) && strings.Contains(line, "store ownership lost") &&
				strings.Contains(line, "epoch") {
				return true
			}
		}
		return false
	})
	if s := mustGet(t, e, done.ID); s.State != messages.StateCompleted {
		t.Errorf("read after the takeover: %+v", s)
	}
}

// TestJournalPostgresLockLostRefusesJobsUntilRetaken cuts the connections
// of an owning PostgreSQL store (a proxy in front of the shared server):
// once the store reports its lock lost, admission answers
// ErrStoreUnavailable and the log says the ownership is lost; when the
// connection is back and nobody else took the store, the store takes it
// back under a new epoch and admission resumes.
func TestJournalPostgresLockLostRefusesJobsUntilRetaken(t *testing.T) {
	proxy, via := storetest.ProxyPostgres(t, storetest.TempPostgresDatabase(t))
	changes := make(chan sqlstore.ChangeKind, 16)
	st := openJournalStore(t, func(ctx context.Context) (store.Store, error) {
		return sqlstore.OpenPostgres(ctx, via, 4, sqlstore.Options{Owner: &sqlstore.Ownership{
			CheckInterval: 50 * time.Millisecond,
			OnChange:      func(c sqlstore.OwnershipChange) { changes <- c.Kind },
		}})
	})
	var logs syncbuf.Buffer
	e, _ := newEngine(t, Options{Journal: st, Logger: zerolog.New(&logs)})
	mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "a"}, completes("Completed", "{}"))

	proxy.Cut()
	waitChange(t, changes, sqlstore.OwnershipLost)
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "b"}, blocks, nil)
	if !errors.Is(err, messages.ErrStoreUnavailable) {
		t.Fatalf("create with the store's lock lost: %v, want ErrStoreUnavailable", err)
	}
	eventually(t, "the ownership loss logged", func() bool {
		return strings.Contains(logs.String(), "store ownership lost: this rmsd may not write its job journal")
	})

	proxy.Restore()
	waitChange(t, changes, sqlstore.OwnershipRegained)
	eventually(t, "the journal is written again", func() bool { return !e.core.journal.unavailable() })
	again := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "c"}, completes("Completed", "{}"))
	waitTerminal(t, e, again.ID)
}

// waitChange waits, within a generous bound, for the next ownership change
// and fails the test unless it is want.
func waitChange(t *testing.T, changes <-chan sqlstore.ChangeKind, want sqlstore.ChangeKind) {
	t.Helper()
	select {
	case got := <-changes:
		if got != want {
			t.Fatalf("ownership change %d, want %d", got, want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("no ownership change %d within 30s", want)
	}
}
