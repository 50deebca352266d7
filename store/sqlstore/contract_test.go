package sqlstore_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

func TestSQLiteContract(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		Fresh: func(t *testing.T) string { return filepath.Join(t.TempDir(), "rmsd.db") },
		Open: func(ctx context.Context, path string, now func() time.Time) (store.Store, error) {
			return sqlstore.OpenSQLite(ctx, path, sqlstore.Options{Now: now})
		},
		OpenOwned: func(ctx context.Context, path, host string, pid int) (store.Store, error) {
			return sqlstore.OpenSQLite(ctx, path, sqlstore.Options{Owner: &sqlstore.Ownership{Host: host, PID: pid}})
		},
		TakeOver: func(t *testing.T, path string) { takeOver(t, "sqlite", path) },
	})
}

func TestPostgresContract(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		Fresh: func(t *testing.T) string { return storetest.TempPostgresDatabase(t) },
		Open: func(ctx context.Context, url string, now func() time.Time) (store.Store, error) {
			return sqlstore.OpenPostgres(ctx, url, 4, sqlstore.Options{Now: now})
		},
		OpenOwned: func(ctx context.Context, url, host string, pid int) (store.Store, error) {
			return sqlstore.OpenPostgres(ctx, url, 4, sqlstore.Options{Owner: &sqlstore.Ownership{Host: host, PID: pid}})
		},
		TakeOver: func(t *testing.T, url string) { takeOver(t, "pgx", url) },
	})
}

// takeOver moves the owner record to a newer epoch directly in the
// database, as an rmsd that found the lock free would.
func takeOver(t *testing.T, driver, dsn string) {
	t.Helper()
	db, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.ExecContext(t.Context(), `UPDATE store_owner SET epoch = epoch + 1, host = 'host-z', pid = 9999 WHERE id = 1`)
	if err != nil {
		t.Fatalf("take the store over: %v", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("take the store over: %d owner rows, want 1", n)
	}
}
