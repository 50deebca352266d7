package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/store"
)

// Options tune a store; the zero value is the production setting.
type Options struct {
	// Now is the clock that stamps created, updated, applied and recorded
	// times; nil means time.Now. Times are kept to the microsecond, in UTC.
	Now func() time.Time
	// Owner, when set, opens the store as this process's own (see
	// Ownership): a daemon's store. Nil opens it shared, without a lock
	// and without the epoch check (tools and tests).
	Owner *Ownership
	// ReadTimeout bounds every read (DefaultReadTimeout when zero): a
	// database that has not answered by then fails the read with
	// store.ErrUnavailable, whatever the caller's own deadline.
	ReadTimeout time.Duration
	// WriteTimeout bounds every write but the job journal's (ReadTimeout
	// when zero): a catalog change, an apply record, a node or rack
	// registration, an Update. A database that has not committed by then
	// fails the write with store.ErrUnavailable, whatever the caller's own
	// deadline. AppendEvents and CompactEvents are left to the caller's
	// deadline: the job engine bounds each journal commit itself.
	WriteTimeout time.Duration
}

// DefaultReadTimeout bounds a read of the catalog, the apply history, the
// nodes or the journal when Options.ReadTimeout is zero: below the
// deadlines gRPC callers usually set, so a stalled database answers them
// UNAVAILABLE rather than leaving them to time out.
const DefaultReadTimeout = 5 * time.Second

// Store is store.Store on a SQL database. Open it with OpenSQLite or
// OpenPostgres.
type Store struct {
	write *sql.DB // read-write transactions
	read  *sql.DB // read-only transactions; may be write itself
	d     *dialect
	now   func() time.Time
	info  store.Info
	own   *owner // nil: opened shared
	// readTimeout bounds every read (view); writeTimeout every write but
	// the journal's (write).
	readTimeout, writeTimeout time.Duration
}

var _ store.Store = (*Store)(nil)

// newStore migrates the schema on write and returns the store. On failure
// it closes both pools.
func newStore(ctx context.Context, write, read *sql.DB, d *dialect, o Options, location string) (*Store, error) {
	s := &Store{write: write, read: read, d: d, now: o.Now, readTimeout: o.ReadTimeout, writeTimeout: o.WriteTimeout}
	if s.readTimeout <= 0 {
		s.readTimeout = DefaultReadTimeout
	}
	if s.writeTimeout <= 0 {
		s.writeTimeout = s.readTimeout
	}
	if s.now == nil {
		s.now = time.Now
	}
	ms, err := loadMigrations(migrationFiles, "migrations/"+d.engine)
	if err == nil {
		s.info.SchemaVersion, _, err = migrate(ctx, write, d, ms, s.clock())
	}
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	s.info.Engine, s.info.Location = d.engine, location
	return s, nil
}

// clock reads s.now in the precision and zone the database keeps.
func (s *Store) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// Info implements store.Store.
func (s *Store) Info() store.Info { return s.info }

// Owner implements store.Owned: this process's holding of a store opened
// with Options.Owner (a zero Holder for a shared store).
func (s *Store) Owner() store.Holder {
	if s.own == nil {
		return store.Holder{}
	}
	return s.own.holder()
}

// Close implements store.Store. An owner gives its lock up last, once
// its pools are closed.
func (s *Store) Close() error {
	err := s.write.Close()
	if s.read != s.write {
		err = errors.Join(err, s.read.Close())
	}
	if s.own != nil {
		err = errors.Join(err, s.own.close())
	}
	if err != nil {
		return fmt.Errorf("sqlstore: close %s store: %w", s.d.engine, err)
	}
	return nil
}

// Update implements store.Store, within the store's write deadline.
func (s *Store) Update(ctx context.Context, fn func(tx store.Tx) error) error {
	_, err := write(ctx, s, func(t *tx) (struct{}, error) { return struct{}{}, fn(t) })
	return err
}

// inTx runs fn in a transaction on db and commits it when fn returns nil.
// fn's error is returned unchanged. A read-write transaction (opts nil) of
// an owning store first checks that the store is still its own.
func (s *Store) inTx(ctx context.Context, db *sql.DB, opts *sql.TxOptions, fn func(t *tx) error) error {
	if s.own != nil && opts == nil {
		if err := s.own.refusing(); err != nil {
			return err // before the database: it may be what was lost
		}
	}
	sqlTx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("sqlstore: begin: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			_ = sqlTx.Rollback()
		}
	}()
	if s.own != nil && opts == nil {
		if err := s.own.check(ctx, sqlTx, s.d); err != nil {
			return err
		}
	}
	t := &tx{q: sqlTx, d: s.d, now: s.clock, bound: ctx}
	defer t.release()
	if err := fn(t); err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: commit: %w", err)
	}
	committed = true
	return nil
}

// update runs one write in its own transaction, bounded by the caller's
// context only: the journal's (its caller bounds each commit).
func update[T any](ctx context.Context, s *Store, fn func(t *tx) (T, error)) (T, error) {
	var out T
	err := s.inTx(ctx, s.write, nil, func(t *tx) (err error) {
		out, err = fn(t)
		return err
	})
	return out, err
}

// view runs one read in a read-only transaction, so that it sees one
// consistent state, within the store's read deadline: a read the database
// does not answer in time fails with store.ErrUnavailable.
func view[T any](ctx context.Context, s *Store, fn func(t *tx) (T, error)) (T, error) {
	var out T
	rctx, cancel := context.WithTimeout(ctx, s.readTimeout)
	defer cancel()
	err := s.inTx(rctx, s.read, &sql.TxOptions{ReadOnly: true}, func(t *tx) (err error) {
		out, err = fn(t)
		return err
	})
	if err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded) {
		return out, fmt.Errorf("sqlstore: read: no answer from the database within %s: %w", s.readTimeout, store.ErrUnavailable)
	}
	return out, err
}

// write runs one write in its own transaction within the store's write
// deadline: a transaction the database has not committed in time (a
// stalled begin, statement or commit) is rolled back and fails with
// store.ErrUnavailable. The caller's own deadline or cancellation is
// returned as it is.
func write[T any](ctx context.Context, s *Store, fn func(t *tx) (T, error)) (T, error) {
	wctx, cancel := context.WithTimeout(ctx, s.writeTimeout)
	defer cancel()
	out, err := update(wctx, s, fn)
	if err != nil && ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded) {
		return out, fmt.Errorf("sqlstore: write: store unavailable, no answer from the database within %s; nothing is known to have been written, retry once it answers: %w",
			s.writeTimeout, store.ErrUnavailable)
	}
	return out, err
}

// writeErr is write for a write that returns only an error.
func writeErr(ctx context.Context, s *Store, fn func(t *tx) error) error {
	_, err := write(ctx, s, func(t *tx) (struct{}, error) { return struct{}{}, fn(t) })
	return err
}

// CreateFirmwareObject implements store.Catalog.
func (s *Store) CreateFirmwareObject(ctx context.Context, obj store.FirmwareObject) (store.FirmwareObject, error) {
	return write(ctx, s, func(t *tx) (store.FirmwareObject, error) { return t.CreateFirmwareObject(ctx, obj) })
}

// GetFirmwareObject implements store.Catalog.
func (s *Store) GetFirmwareObject(ctx context.Context, id string) (store.FirmwareObject, error) {
	return view(ctx, s, func(t *tx) (store.FirmwareObject, error) { return t.GetFirmwareObject(ctx, id) })
}

// ListFirmwareObjects implements store.Catalog.
func (s *Store) ListFirmwareObjects(ctx context.Context, f store.ObjectFilter) ([]store.FirmwareObject, error) {
	return view(ctx, s, func(t *tx) ([]store.FirmwareObject, error) { return t.ListFirmwareObjects(ctx, f) })
}

// DeleteFirmwareObject implements store.Catalog.
func (s *Store) DeleteFirmwareObject(ctx context.Context, id string) (store.FirmwareObject, error) {
	return write(ctx, s, func(t *tx) (store.FirmwareObject, error) { return t.DeleteFirmwareObject(ctx, id) })
}

// SetDefaultFirmwareObject implements store.Catalog.
func (s *Store) SetDefaultFirmwareObject(ctx context.Context, id string) (store.FirmwareObject, error) {
	return write(ctx, s, func(t *tx) (store.FirmwareObject, error) { return t.SetDefaultFirmwareObject(ctx, id) })
}

// DefaultFirmwareObject implements store.Catalog.
func (s *Store) DefaultFirmwareObject(ctx context.Context, hardwareType string) (store.FirmwareObject, error) {
	return view(ctx, s, func(t *tx) (store.FirmwareObject, error) { return t.DefaultFirmwareObject(ctx, hardwareType) })
}

// SetObjectAvailability implements store.Catalog.
func (s *Store) SetObjectAvailability(ctx context.Context, id string, available bool, reason string) error {
	return writeErr(ctx, s, func(t *tx) error { return t.SetObjectAvailability(ctx, id, available, reason) })
}

// TouchFirmwareDownloads implements store.Catalog.
func (s *Store) TouchFirmwareDownloads(ctx context.Context, downloader string, ids []string) error {
	return writeErr(ctx, s, func(t *tx) error { return t.TouchFirmwareDownloads(ctx, downloader, ids) })
}

// ClaimFirmwareDownload implements store.Catalog.
func (s *Store) ClaimFirmwareDownload(ctx context.Context, id, from, to string, quiet time.Duration) (bool, error) {
	return write(ctx, s, func(t *tx) (bool, error) { return t.ClaimFirmwareDownload(ctx, id, from, to, quiet) })
}

// SetArtifactStatus implements store.Catalog.
func (s *Store) SetArtifactStatus(ctx context.Context, objectID, name string, status store.ArtifactStatus) error {
	return writeErr(ctx, s, func(t *tx) error { return t.SetArtifactStatus(ctx, objectID, name, status) })
}

// RecordApply implements store.Catalog.
func (s *Store) RecordApply(ctx context.Context, r store.ApplyRecord) (store.ApplyRecord, error) {
	return write(ctx, s, func(t *tx) (store.ApplyRecord, error) { return t.RecordApply(ctx, r) })
}

// ListApplyHistory implements store.Catalog.
func (s *Store) ListApplyHistory(ctx context.Context, f store.HistoryFilter) ([]store.ApplyRecord, error) {
	return view(ctx, s, func(t *tx) ([]store.ApplyRecord, error) { return t.ListApplyHistory(ctx, f) })
}

// AppendEvents implements store.Journal.
func (s *Store) AppendEvents(ctx context.Context, events []store.Event) ([]store.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	return update(ctx, s, func(t *tx) ([]store.Event, error) { return t.AppendEvents(ctx, events) })
}

// ReadEvents implements store.Journal.
func (s *Store) ReadEvents(ctx context.Context, after int64, limit int) ([]store.Event, error) {
	return view(ctx, s, func(t *tx) ([]store.Event, error) { return t.ReadEvents(ctx, after, limit) })
}

// CompactEvents implements store.Journal.
func (s *Store) CompactEvents(ctx context.Context, snapshot []store.Event) ([]store.Event, error) {
	return update(ctx, s, func(t *tx) ([]store.Event, error) { return t.CompactEvents(ctx, snapshot) })
}
