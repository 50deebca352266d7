package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/rmsd/rmsd/store"
)

// A PostgreSQL owner holds a session-level advisory lock (lockOwner) on a
// connection of its own, outside the store's pool, for as long as the
// store is open. A goroutine checks every Ownership.CheckInterval that the
// session still holds it. When it does not (the connection was cut, the
// server restarted) writes are refused at once, and the goroutine tries to
// take the lock again: it keeps the store only if nobody else held it
// meanwhile (the recorded epoch is still its own), under a new epoch;
// otherwise the store has been taken over and stays refused for good.

// ownerQueryTimeout bounds each query of the lock's session.
const ownerQueryTimeout = 10 * time.Second

// pgLock is a session holding (or trying to take) the owner lock.
type pgLock struct {
	db   *sql.DB // one connection, apart from the store's pool
	conn *sql.Conn
}

// rowQuerier is a *sql.DB or a *sql.Conn.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readHolder reads the owner record (a zero Holder when there is none
// yet, e.g. the holder has not migrated the schema that has it).
func readHolder(ctx context.Context, db rowQuerier) store.Holder {
	var h store.Holder
	err := db.QueryRowContext(ctx, `SELECT host, pid, since, epoch FROM store_owner WHERE id = 1`).
		Scan(&h.Host, &h.PID, timeCol{&h.Since}, &h.Epoch)
	if err != nil {
		return store.Holder{}
	}
	return h
}

// takePGLock opens a session and tries to take the owner lock on it. When
// another session has it, the lock is nil and holder is the owner record.
func takePGLock(ctx context.Context, cfg *pgx.ConnConfig) (_ *pgLock, holder store.Holder, err error) {
	l := &pgLock{db: stdlib.OpenDB(*cfg)}
	l.db.SetMaxOpenConns(1)
	defer func() {
		if err != nil || holder != (store.Holder{}) {
			l.close()
		}
	}()
	if l.conn, err = l.db.Conn(ctx); err != nil {
		return nil, store.Holder{}, fmt.Errorf("open a session for the store's lock: %w", err)
	}
	var got bool
	if err := l.conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock($1)`, lockOwner).Scan(&got); err != nil {
		return nil, store.Holder{}, fmt.Errorf("take the store's lock: %w", err)
	}
	if !got {
		h := readHolder(ctx, l.conn)
		if h == (store.Holder{}) {
			h.Epoch = -1 // held, by an rmsd that has not recorded itself yet
		}
		return nil, h, nil
	}
	return l, store.Holder{}, nil
}

// held reports an error unless the session is alive and holds the lock.
func (l *pgLock) held(ctx context.Context) error {
	var n int
	err := l.conn.QueryRowContext(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'
		AND pid = pg_backend_pid() AND granted AND objsubid = 1
		AND ((classid::bigint << 32) | objid::bigint) = $1`, lockOwner).Scan(&n)
	if err != nil {
		return fmt.Errorf("check the store's lock: %w", err)
	}
	if n == 0 {
		return errors.New("check the store's lock: the session no longer holds it")
	}
	return nil
}

// close ends the session, and the lock with it.
func (l *pgLock) close() {
	if l.conn != nil {
		_ = l.conn.Close()
	}
	_ = l.db.Close()
}

// lockPostgres takes the owner lock for own, or returns a *store.HeldError
// naming the holder.
func lockPostgres(ctx context.Context, cfg *pgx.ConnConfig, location string) (*pgLock, error) {
	l, h, err := takePGLock(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if l == nil {
		if h.Epoch < 0 {
			h = store.Holder{}
		}
		return nil, &store.HeldError{Location: location, Holder: h}
	}
	return l, nil
}

// watch starts the goroutine that keeps s's lock: it owns l from now on
// and ends it when the store closes.
func (o *owner) watch(s *Store, l *pgLock, cfg *pgx.ConnConfig, every time.Duration) {
	if every <= 0 {
		every = ownerCheckInterval
	}
	ctx, cancel := context.WithCancel(context.Background())
	o.cancel, o.done = cancel, make(chan struct{})
	go func() {
		defer close(o.done)
		defer func() {
			if l != nil {
				l.close()
			}
		}()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if l != nil {
				if err := o.checkLock(ctx, l); err != nil {
					if ctx.Err() != nil {
						return
					}
					l.close()
					l = nil
					o.lost.Store(true)
					o.notify(OwnershipChange{Kind: OwnershipLost, Holder: o.holder(), Err: err})
				}
				continue
			}
			var final bool
			if l, final = o.retake(ctx, s, cfg); final {
				return
			}
		}
	}()
}

// checkLock checks, within a bound, that l still holds the lock.
func (o *owner) checkLock(ctx context.Context, l *pgLock) error {
	ctx, cancel := context.WithTimeout(ctx, ownerQueryTimeout)
	defer cancel()
	return l.held(ctx)
}

// retake tries to take the lost lock again. It returns the session when
// the store is this process's again; final when another process has taken
// it over (the caller stops trying).
func (o *owner) retake(ctx context.Context, s *Store, cfg *pgx.ConnConfig) (_ *pgLock, final bool) {
	ctx, cancel := context.WithTimeout(ctx, ownerQueryTimeout)
	defer cancel()
	l, other, err := takePGLock(ctx, cfg)
	if err != nil {
		return nil, false // unreachable still: try again later
	}
	if l == nil {
		// Held: by this process's own dead session until the server
		// notices, or by another process, which has recorded a newer
		// epoch once it is in.
		if other.Epoch > o.epoch.Load() {
			o.takenOver.Store(true)
			o.notify(OwnershipChange{Kind: OwnershipTakenOver, Holder: other})
			return nil, true
		}
		return nil, false
	}
	other, err = o.reclaim(ctx, s)
	switch {
	case err != nil:
		l.close()
		return nil, false
	case other != (store.Holder{}):
		l.close()
		o.takenOver.Store(true)
		o.notify(OwnershipChange{Kind: OwnershipTakenOver, Holder: other})
		return nil, true
	}
	o.lost.Store(false)
	o.notify(OwnershipChange{Kind: OwnershipRegained, Holder: o.holder()})
	return l, false
}

// reclaim, with the lock taken again, moves the owner record to a new
// epoch if it still holds this process's; otherwise it returns the record
// of the process that took the store over meanwhile.
func (o *owner) reclaim(ctx context.Context, s *Store) (store.Holder, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return store.Holder{}, err
	}
	defer func() { _ = tx.Rollback() }()
	var h store.Holder
	if err := tx.QueryRowContext(ctx, `SELECT host, pid, since, epoch FROM store_owner WHERE id = 1 FOR UPDATE`).
		Scan(&h.Host, &h.PID, timeCol{&h.Since}, &h.Epoch); err != nil {
		return store.Holder{}, err
	}
	if h.Epoch != o.epoch.Load() {
		return h, nil
	}
	now := s.clock()
	var epoch int64
	if err := tx.QueryRowContext(ctx, `UPDATE store_owner SET epoch = epoch + 1, since = $1 WHERE id = 1 RETURNING epoch`,
		s.d.timeArg(now)).Scan(&epoch); err != nil {
		return store.Holder{}, err
	}
	if err := tx.Commit(); err != nil {
		return store.Holder{}, err
	}
	o.mu.Lock()
	o.since = now
	o.epoch.Store(epoch)
	o.mu.Unlock()
	return store.Holder{}, nil
}
