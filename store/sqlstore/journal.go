package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rmsd/rmsd/store"
)

// AppendEvents implements store.Journal. Appends are serialised (SQLite
// has one writer; PostgreSQL takes an advisory lock held until commit), so
// no append commits a lower Seq after a reader has seen a higher one.
func (t *tx) AppendEvents(ctx context.Context, events []store.Event) ([]store.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	for _, e := range events {
		if err := e.Validate(); err != nil {
			return nil, err
		}
	}
	if t.d.serialise != "" {
		if _, err := t.q.ExecContext(ctx, fmt.Sprintf(t.d.serialise, lockJournal)); err != nil {
			return nil, fmt.Errorf("sqlstore: append %d events: lock: %w", len(events), err)
		}
	}
	now := t.now()
	out := make([]store.Event, 0, len(events))
	for len(events) > 0 {
		n := min(len(events), appendRowsPerStatement)
		seqs, err := t.insertEvents(ctx, events[:n], now)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: append %d events: %w", len(events), err)
		}
		for i, e := range events[:n] {
			e.Seq, e.Recorded = seqs[i], now
			out = append(out, e)
		}
		events = events[n:]
	}
	return out, nil
}

// appendRowsPerStatement bounds one INSERT's rows (3 arguments each, far
// below SQLite's and PostgreSQL's argument limits).
const appendRowsPerStatement = 200

// insertEvents inserts events in one statement, one round trip, and returns
// their sequence numbers in order. Within a statement both databases number
// rows in ascending order, so the sorted numbers are the rows' in order.
func (t *tx) insertEvents(ctx context.Context, events []store.Event, now time.Time) ([]int64, error) {
	var q strings.Builder
	q.WriteString("INSERT INTO journal_events (kind, data, recorded_at) VALUES ")
	args := make([]any, 0, 3*len(events))
	for i, e := range events {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?)")
		data := e.Data
		if data == nil {
			data = []byte{}
		}
		args = append(args, e.Kind, data, t.d.timeArg(now))
	}
	q.WriteString(" RETURNING seq")
	rows, err := t.q.QueryContext(ctx, t.d.sql(q.String()), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	seqs := make([]int64, 0, len(events))
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		seqs = append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(seqs) != len(events) {
		return nil, fmt.Errorf("%d rows inserted, %d sequence numbers returned", len(events), len(seqs))
	}
	slices.Sort(seqs)
	return seqs, nil
}

// ReadEvents implements store.Journal.
func (t *tx) ReadEvents(ctx context.Context, after int64, limit int) ([]store.Event, error) {
	query := `SELECT seq, kind, data, recorded_at FROM journal_events WHERE seq > ? ORDER BY seq`
	args := []any{after}
	if limit > 0 {
		query += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := t.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: read events after %d: %w", after, err)
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		var e store.Event
		if err := rows.Scan(&e.Seq, &e.Kind, &e.Data, timeCol{&e.Recorded}); err != nil {
			return nil, fmt.Errorf("sqlstore: read events after %d: %w", after, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: read events after %d: %w", after, err)
	}
	return out, nil
}

// CompactEvents implements store.Journal: the snapshot is appended under the
// append lock, then every older row is deleted, in the same transaction.
func (t *tx) CompactEvents(ctx context.Context, snapshot []store.Event) ([]store.Event, error) {
	if len(snapshot) == 0 {
		return nil, fmt.Errorf("sqlstore: compact journal: empty snapshot: %w", store.ErrInvalid)
	}
	out, err := t.AppendEvents(ctx, snapshot)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: compact journal: %w", err)
	}
	if _, err := t.exec(ctx, `DELETE FROM journal_events WHERE seq < ?`, out[0].Seq); err != nil {
		return nil, fmt.Errorf("sqlstore: compact journal: delete events before %d: %w", out[0].Seq, err)
	}
	return out, nil
}
