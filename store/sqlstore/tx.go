package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/rmsd/rmsd/store"
)

// tx is store.Tx: the catalog and journal operations on one SQL
// transaction. Every method writes its queries with ? placeholders and
// runs them through the dialect.
type tx struct {
	q   *sql.Tx
	d   *dialect
	now func() time.Time
}

var _ store.Tx = (*tx)(nil)

func (t *tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.q.ExecContext(ctx, t.d.sql(query), args...)
}

func (t *tx) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.q.QueryContext(ctx, t.d.sql(query), args...)
}

func (t *tx) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return t.q.QueryRowContext(ctx, t.d.sql(query), args...)
}
