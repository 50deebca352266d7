package actors

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
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
	var logs syncBuffer
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
