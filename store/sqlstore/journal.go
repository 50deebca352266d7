package sqlstore

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/rmsd/rmsd/store"
)

// AppendEvents implements store.Journal on the stream ” (the journal of a
// single rmsd). Appends are serialised (SQLite has one writer; PostgreSQL
// takes an advisory lock held until commit), so no append commits a
// lower Seq after a reader has seen a higher one.
func (t *tx) AppendEvents(ctx context.Context, events []store.Event) ([]store.Event, error) {
	return t.appendStream(ctx, "", events)
}

// appendStream appends events to stream, serialised with every other
// append to the same stream until this transaction ends.
//
// Seq is one series for every stream, drawn when a row is inserted, so
// transactions of different streams may commit out of Seq order. That is
// harmless to a reader of a stream, which reads its own stream only. Within
// one stream the lock orders them: the lock (the stream ” its own key,
// every other stream a key of its name) is taken before the rows draw
// their Seq and held until commit, so a later append to the stream draws
// its Seq only after the earlier one has committed or rolled back. A reader
// of stream R after Seq n therefore never sees an R event before an
// earlier-numbered R event has committed: none can commit later with a
// smaller Seq. Two streams whose names share a key only wait for each other.
// Appends of a rack's stream also record, in the same transaction, the rack
// of every job their events name (job_rack).
func (t *tx) appendStream(ctx context.Context, stream string, events []store.Event) ([]store.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	for _, e := range events {
		if err := e.Validate(); err != nil {
			return nil, err
		}
	}
	if err := t.lockStream(ctx, stream); err != nil {
		return nil, fmt.Errorf("sqlstore: append %d events: lock: %w", len(events), err)
	}
	now := t.now()
	out := make([]store.Event, 0, len(events))
	for len(events) > 0 {
		n := min(len(events), appendRowsPerStatement)
		seqs, err := t.insertEvents(ctx, stream, events[:n], now)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: append %d events: %w", len(events), err)
		}
		for i, e := range events[:n] {
			e.Seq, e.Recorded = seqs[i], now
			out = append(out, e)
		}
		events = events[n:]
	}
	if stream != "" {
		if err := t.recordJobRacks(ctx, stream, out, now); err != nil {
			return nil, fmt.Errorf("sqlstore: append %d events: %w", len(out), err)
		}
	}
	return out, nil
}

// lockStream serialises this transaction's appends to stream with every
// other transaction's, until it ends (nothing to do on SQLite, whose
// writes are all serialised).
func (t *tx) lockStream(ctx context.Context, stream string) error {
	if t.d.serialise == "" {
		return nil
	}
	query := fmt.Sprintf(t.d.serialise, lockJournal)
	if stream != "" {
		query = fmt.Sprintf(t.d.serialisePair, lockStreamClass, streamKey(stream))
	}
	_, err := t.q.ExecContext(ctx, query)
	return err
}

// streamKey is a stream's advisory lock key within lockStreamClass.
func streamKey(stream string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(stream))
	return int32(h.Sum32())
}

// recordJobRacks records rack as the rack of every job the events name.
// A job already recorded keeps its first rack.
func (t *tx) recordJobRacks(ctx context.Context, rack string, events []store.Event, now time.Time) error {
	var jobs []string
	for _, e := range events {
		jobs = append(jobs, e.Jobs...)
	}
	for len(jobs) > 0 {
		n := min(len(jobs), appendRowsPerStatement)
		var q strings.Builder
		q.WriteString("INSERT INTO job_rack (job_id, rack_id, recorded) VALUES ")
		args := make([]any, 0, 3*n)
		for i, job := range jobs[:n] {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?)")
			args = append(args, job, rack, t.d.timeArg(now))
		}
		q.WriteString(" ON CONFLICT (job_id) DO NOTHING")
		if _, err := t.exec(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("record the rack of %d jobs: %w", n, err)
		}
		jobs = jobs[n:]
	}
	return nil
}

// appendRowsPerStatement bounds one INSERT's rows (4 arguments each, far
// below SQLite's and PostgreSQL's argument limits).
const appendRowsPerStatement = 200

// insertEvents inserts events in one statement, one round trip, and returns
// their sequence numbers in order. Within a statement both databases number
// rows in ascending order, so the sorted numbers are the rows' in order.
func (t *tx) insertEvents(ctx context.Context, stream string, events []store.Event, now time.Time) ([]int64, error) {
	var q strings.Builder
	q.WriteString("INSERT INTO journal_events (stream, kind, data, recorded_at) VALUES ")
	args := make([]any, 0, 4*len(events))
	for i, e := range events {
		if i > 0 {
			q.WriteString(", ")
		}
		q.WriteString("(?, ?, ?, ?)")
		data := e.Data
		if data == nil {
			data = []byte{}
		}
		args = append(args, stream, e.Kind, data, t.d.timeArg(now))
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

// ReadEvents implements store.Journal on the stream ”.
func (t *tx) ReadEvents(ctx context.Context, after int64, limit int) ([]store.Event, error) {
	return t.readStream(ctx, "", after, limit)
}

// readStream reads stream's events after Seq after, in Seq order.
func (t *tx) readStream(ctx context.Context, stream string, after int64, limit int) ([]store.Event, error) {
	query := `SELECT seq, kind, data, recorded_at FROM journal_events WHERE stream = ? AND seq > ? ORDER BY seq`
	args := []any{stream, after}
	if limit > 0 {
		query += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := t.query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: read events%s after %d: %w", streamName(stream), after, err)
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		var e store.Event
		if err := rows.Scan(&e.Seq, &e.Kind, &e.Data, timeCol{&e.Recorded}); err != nil {
			return nil, fmt.Errorf("sqlstore: read events%s after %d: %w", streamName(stream), after, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: read events%s after %d: %w", streamName(stream), after, err)
	}
	return out, nil
}

// CompactEvents implements store.Journal on the stream ”.
func (t *tx) CompactEvents(ctx context.Context, snapshot []store.Event) ([]store.Event, error) {
	return t.compactStream(ctx, "", snapshot)
}

// compactStream appends the snapshot to stream under the stream's append
// lock, then deletes every older row of the stream, in the same
// transaction.
func (t *tx) compactStream(ctx context.Context, stream string, snapshot []store.Event) ([]store.Event, error) {
	if len(snapshot) == 0 {
		return nil, fmt.Errorf("sqlstore: compact journal%s: empty snapshot: %w", streamName(stream), store.ErrInvalid)
	}
	out, err := t.appendStream(ctx, stream, snapshot)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: compact journal%s: %w", streamName(stream), err)
	}
	if _, err := t.exec(ctx, `DELETE FROM journal_events WHERE stream = ? AND seq < ?`, stream, out[0].Seq); err != nil {
		return nil, fmt.Errorf("sqlstore: compact journal%s: delete events before %d: %w", streamName(stream), out[0].Seq, err)
	}
	return out, nil
}

// streamName names a rack's stream in errors ("" for the stream ”).
func streamName(stream string) string {
	if stream == "" {
		return ""
	}
	return " of rack " + stream
}
