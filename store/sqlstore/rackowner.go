package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/store"
)

// Rack ownership (store.RackOwners) on PostgreSQL: one rack_owner row per
// rack ever owned, never deleted, so that its epoch only grows. Times are
// the server's: now() is the transaction's start, which errs on the side
// of an earlier expiry for the owner and a later takeover for the others.

var _ store.RackOwners = (*Store)(nil)

// rackLeaseColumns is what every rack ownership query returns.
const rackLeaseColumns = `rack_id, member, epoch, since, expires_at`

// clusterable refuses the engines a cluster cannot share.
func (s *Store) clusterable() error {
	if s.d.engine != postgresDialect.engine {
		return fmt.Errorf("sqlstore: rack ownership on a %s store: %w", s.d.engine, store.ErrClusterUnsupported)
	}
	return nil
}

// scanLease reads one rack_owner row.
func scanLease(row interface{ Scan(...any) error }) (store.RackLease, error) {
	var l store.RackLease
	err := row.Scan(&l.RackID, &l.Member, &l.Epoch, timeCol{&l.Since}, timeCol{&l.Expires})
	return l, err
}

// ttlSeconds is a lease length as the queries take it.
func ttlSeconds(ttl time.Duration) (float64, error) {
	if ttl <= 0 {
		return 0, fmt.Errorf("rack lease of %s: must be positive: %w", ttl, store.ErrInvalid)
	}
	return ttl.Seconds(), nil
}

// AcquireRack implements store.RackOwners.
func (s *Store) AcquireRack(ctx context.Context, rackID, member string, ttl time.Duration) (store.RackLease, error) {
	if err := s.clusterable(); err != nil {
		return store.RackLease{}, err
	}
	secs, err := ttlSeconds(ttl)
	if err != nil {
		return store.RackLease{}, err
	}
	if rackID == "" || member == "" {
		return store.RackLease{}, fmt.Errorf("sqlstore: acquire rack %q for member %q: both are required: %w", rackID, member, store.ErrInvalid)
	}
	return write(ctx, s, func(t *tx) (store.RackLease, error) {
		// A rack never owned gets a row that has already ended, so that
		// two members acquiring it at once queue on that row's lock.
		if _, err := t.exec(ctx, `INSERT INTO rack_owner (`+rackLeaseColumns+`) VALUES (?, '', 0, now(), to_timestamp(0))
			ON CONFLICT (rack_id) DO NOTHING`, rackID); err != nil {
			return store.RackLease{}, fmt.Errorf("sqlstore: acquire rack %s: %w", rackID, err)
		}
		var live bool
		var cur store.RackLease
		err := t.queryRow(ctx, `SELECT `+rackLeaseColumns+`, expires_at > now() FROM rack_owner WHERE rack_id = ? FOR UPDATE`, rackID).
			Scan(&cur.RackID, &cur.Member, &cur.Epoch, timeCol{&cur.Since}, timeCol{&cur.Expires}, &live)
		if err != nil {
			return store.RackLease{}, fmt.Errorf("sqlstore: acquire rack %s: %w", rackID, err)
		}
		if live && cur.Member != member {
			return store.RackLease{}, &store.RackHeldError{Owner: cur}
		}
		l, err := scanLease(t.queryRow(ctx, `UPDATE rack_owner SET member = ?, epoch = epoch + 1, since = now(),
			expires_at = now() + ?::double precision * interval '1 second' WHERE rack_id = ? RETURNING `+rackLeaseColumns,
			member, secs, rackID))
		if err != nil {
			return store.RackLease{}, fmt.Errorf("sqlstore: acquire rack %s: %w", rackID, err)
		}
		return l, nil
	})
}

// RenewRack implements store.RackOwners.
func (s *Store) RenewRack(ctx context.Context, lease store.RackLease, ttl time.Duration) (store.RackLease, error) {
	if err := s.clusterable(); err != nil {
		return store.RackLease{}, err
	}
	secs, err := ttlSeconds(ttl)
	if err != nil {
		return store.RackLease{}, err
	}
	return write(ctx, s, func(t *tx) (store.RackLease, error) {
		l, err := scanLease(t.queryRow(ctx, `UPDATE rack_owner SET expires_at = now() + ?::double precision * interval '1 second'
			WHERE rack_id = ? AND epoch = ? AND member = ? AND expires_at > now() RETURNING `+rackLeaseColumns,
			secs, lease.RackID, lease.Epoch, lease.Member))
		if errors.Is(err, sql.ErrNoRows) {
			return store.RackLease{}, fmt.Errorf("sqlstore: renew rack %s: %w", lease.RackID, staleLease(ctx, t, lease))
		}
		if err != nil {
			return store.RackLease{}, fmt.Errorf("sqlstore: renew rack %s: %w", lease.RackID, err)
		}
		return l, nil
	})
}

// ReleaseRack implements store.RackOwners.
func (s *Store) ReleaseRack(ctx context.Context, lease store.RackLease) error {
	if err := s.clusterable(); err != nil {
		return err
	}
	return writeErr(ctx, s, func(t *tx) error {
		if _, err := t.exec(ctx, `UPDATE rack_owner SET expires_at = now() WHERE rack_id = ? AND epoch = ? AND expires_at > now()`,
			lease.RackID, lease.Epoch); err != nil {
			return fmt.Errorf("sqlstore: release rack %s: %w", lease.RackID, err)
		}
		return nil
	})
}

// RackOwner implements store.RackOwners.
func (s *Store) RackOwner(ctx context.Context, rackID string) (store.RackLease, error) {
	if err := s.clusterable(); err != nil {
		return store.RackLease{}, err
	}
	return view(ctx, s, func(t *tx) (store.RackLease, error) {
		l, err := scanLease(t.queryRow(ctx, `SELECT `+rackLeaseColumns+` FROM rack_owner WHERE rack_id = ? AND epoch > 0`, rackID))
		if errors.Is(err, sql.ErrNoRows) {
			return store.RackLease{}, fmt.Errorf("sqlstore: rack %s has never been owned: %w", rackID, store.ErrNotFound)
		}
		if err != nil {
			return store.RackLease{}, fmt.Errorf("sqlstore: read the owner of rack %s: %w", rackID, err)
		}
		return l, nil
	})
}

// UpdateRack implements store.RackOwners. Like the journal's appends it is
// bounded by the caller's context only.
func (s *Store) UpdateRack(ctx context.Context, lease store.RackLease, fn func(tx store.Tx) error) error {
	_, err := fenced(ctx, s, lease, func(t *tx) (struct{}, error) { return struct{}{}, fn(t) })
	return err
}

// AppendRackEvents implements store.RackOwners.
func (s *Store) AppendRackEvents(ctx context.Context, lease store.RackLease, events []store.Event) ([]store.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	if err := rackStream(lease.RackID); err != nil {
		return nil, err
	}
	return fenced(ctx, s, lease, func(t *tx) ([]store.Event, error) { return t.appendStream(ctx, lease.RackID, events) })
}

// ReadRackEvents implements store.RackOwners.
func (s *Store) ReadRackEvents(ctx context.Context, rackID string, after int64, limit int) ([]store.Event, error) {
	if err := s.clusterable(); err != nil {
		return nil, err
	}
	if err := rackStream(rackID); err != nil {
		return nil, err
	}
	return view(ctx, s, func(t *tx) ([]store.Event, error) { return t.readStream(ctx, rackID, after, limit) })
}

// CompactRackEvents implements store.RackOwners.
func (s *Store) CompactRackEvents(ctx context.Context, lease store.RackLease, snapshot []store.Event) ([]store.Event, error) {
	if err := rackStream(lease.RackID); err != nil {
		return nil, err
	}
	return fenced(ctx, s, lease, func(t *tx) ([]store.Event, error) { return t.compactStream(ctx, lease.RackID, snapshot) })
}

// JobRack implements store.RackOwners.
func (s *Store) JobRack(ctx context.Context, jobID string) (string, error) {
	if err := s.clusterable(); err != nil {
		return "", err
	}
	return view(ctx, s, func(t *tx) (string, error) {
		var rack string
		err := t.queryRow(ctx, `SELECT rack_id FROM job_rack WHERE job_id = ?`, jobID).Scan(&rack)
		if errors.Is(err, sql.ErrNoRows) {
			return "", fmt.Errorf("sqlstore: no rack's journal recorded job %s: %w", jobID, store.ErrNotFound)
		}
		if err != nil {
			return "", fmt.Errorf("sqlstore: read the rack of job %s: %w", jobID, err)
		}
		return rack, nil
	})
}

// PruneJobRacks implements store.RackOwners.
func (s *Store) PruneJobRacks(ctx context.Context, olderThan time.Time) (int, error) {
	if err := s.clusterable(); err != nil {
		return 0, err
	}
	return write(ctx, s, func(t *tx) (int, error) {
		res, err := t.exec(ctx, `DELETE FROM job_rack WHERE recorded < ?`, t.d.timeArg(olderThan))
		if err != nil {
			return 0, fmt.Errorf("sqlstore: prune job racks recorded before %s: %w", olderThan.UTC().Format(time.RFC3339), err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("sqlstore: prune job racks: %w", err)
		}
		return int(n), nil
	})
}

// rackStream refuses the empty rack id, whose stream is a single rmsd's
// journal.
func rackStream(rackID string) error {
	if rackID == "" {
		return fmt.Errorf("sqlstore: rack journal: empty rack id: %w", store.ErrInvalid)
	}
	return nil
}

// fenced runs fn in a write transaction that first checks lease.
func fenced[T any](ctx context.Context, s *Store, lease store.RackLease, fn func(t *tx) (T, error)) (T, error) {
	var zero T
	if err := s.clusterable(); err != nil {
		return zero, err
	}
	return update(ctx, s, func(t *tx) (T, error) {
		if err := t.checkLease(ctx, lease); err != nil {
			return zero, err
		}
		return fn(t)
	})
}

// checkLease refuses a transaction whose lease is no longer the rack's or
// has ended, and otherwise share-locks the rack's row until it ends.
func (t *tx) checkLease(ctx context.Context, lease store.RackLease) error {
	var epoch int64
	var live bool
	err := t.queryRow(ctx, `SELECT epoch, expires_at > now() FROM rack_owner WHERE rack_id = ? FOR SHARE`, lease.RackID).Scan(&epoch, &live)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("sqlstore: rack %s has no owner; epoch %d is not its own: %w", lease.RackID, lease.Epoch, store.ErrNotOwner)
	case err != nil:
		return fmt.Errorf("sqlstore: check the owner of rack %s: %w", lease.RackID, err)
	case epoch != lease.Epoch:
		return fmt.Errorf("sqlstore: epoch %d of rack %s is stale (the rack is at epoch %d: another owner has taken it): %w",
			lease.Epoch, lease.RackID, epoch, store.ErrNotOwner)
	case !live:
		return fmt.Errorf("sqlstore: the lease of rack %s under epoch %d has ended: %w", lease.RackID, lease.Epoch, store.ErrNotOwner)
	}
	return nil
}

// staleLease says why lease can no longer be renewed.
func staleLease(ctx context.Context, t *tx, lease store.RackLease) error {
	if err := t.checkLease(ctx, lease); err != nil {
		return err
	}
	return fmt.Errorf("rack %s is not owned by member %s: %w", lease.RackID, lease.Member, store.ErrNotOwner)
}
