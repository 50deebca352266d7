package sqlstore_test

import (
	"context"
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
	})
}

func TestPostgresContract(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		Fresh: func(t *testing.T) string { return storetest.TempPostgresDatabase(t) },
		Open: func(ctx context.Context, url string, now func() time.Time) (store.Store, error) {
			return sqlstore.OpenPostgres(ctx, url, 4, sqlstore.Options{Now: now})
		},
	})
}
