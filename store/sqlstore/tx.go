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
	// bound is the context the transaction began with (the store's read
	// or write deadline); stops release what within set up.
	bound context.Context
	stops []func()
}

var _ store.Tx = (*tx)(nil)

// within returns ctx, ended also when the transaction's own context ends:
// a statement run with a caller's longer-lived context still stops at the
// store's deadline (database/sql would otherwise wait for the statement
// before rolling back). What it sets up is released by release.
func (t *tx) within(ctx context.Context) context.Context {
	if t.bound == nil || t.bound == ctx || t.bound.Done() == nil {
		return ctx
	}
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(t.bound, cancel)
	t.stops = append(t.stops, func() { stop(); cancel() })
	return c
}

// release ends the contexts within made, once the transaction is over.
func (t *tx) release() {
	for _, stop := range t.stops {
		stop()
	}
	t.stops = nil
}

func (t *tx) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.q.ExecContext(t.within(ctx), t.d.sql(query), args...)
}

func (t *tx) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.q.QueryContext(t.within(ctx), t.d.sql(query), args...)
}

func (t *tx) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return t.q.QueryRowContext(t.within(ctx), t.d.sql(query), args...)
}
