package sqlstore

import (
	"context"
	"fmt"

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
	stmt, err := t.q.PrepareContext(ctx, t.d.sql(`INSERT INTO journal_events (kind, data, recorded_at) VALUES (?, ?, ?) RETURNING seq`))
	if err != nil {
		return nil, fmt.Errorf("sqlstore: append %d events: %w", len(events), err)
	}
	defer stmt.Close()
	now := t.now()
	out := make([]store.Event, len(events))
	for i, e := range events {
		e.Recorded = now
		data := e.Data
		if data == nil {
			data = []byte{}
		}
		if err := stmt.QueryRowContext(ctx, e.Kind, data, t.d.timeArg(now)).Scan(&e.Seq); err != nil {
			return nil, fmt.Errorf("sqlstore: append %d events: event %d (%s): %w", len(events), i, e.Kind, err)
		}
		out[i] = e
	}
	return out, nil
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
