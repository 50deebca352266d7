package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmsd/rmsd/store"
)

// Ownership asks OpenSQLite or OpenPostgres to open the store as this
// process's own, for as long as the store is open: the engine's lock is
// taken first (SQLite: an flock on <database>.lock; PostgreSQL: a
// session-level advisory lock on a connection of its own), a store held
// by another process is refused with a *store.HeldError naming it, and
// the owner record's epoch is incremented. From then on every write
// transaction first checks that the recorded epoch is still this store's,
// and fails with store.ErrNotOwner when it is not or while the lock is
// lost.
type Ownership struct {
	// Host and PID name this process in the owner record and in the
	// refusals other processes get; empty means os.Hostname and
	// os.Getpid.
	Host string
	PID  int
	// OnChange, when set, is told when the store loses its lock, gets it
	// back, or finds it taken over. It is called from the store's own
	// goroutine, never concurrently with itself, and must not block.
	OnChange func(OwnershipChange)
	// CheckInterval is how often the PostgreSQL lock's connection is
	// checked (zero: ownerCheckInterval).
	CheckInterval time.Duration
	// Wait is how long Open keeps trying a held lock before it refuses:
	// a process that has just been killed lets its PostgreSQL lock go
	// only once the server has noticed. Zero refuses at once.
	Wait time.Duration
}

// ownerRetryEvery is how often Open tries a held lock again within
// Ownership.Wait.
const ownerRetryEvery = 100 * time.Millisecond

// ownerCheckInterval is how often a PostgreSQL owner checks that its lock's
// connection is alive, and, once it is not, tries to take the lock again.
const ownerCheckInterval = time.Second

// ChangeKind says what happened to a store's ownership.
type ChangeKind int

// The changes OnChange is told about.
const (
	// OwnershipLost: the lock's connection failed. Writes are refused
	// until the lock is held again.
	OwnershipLost ChangeKind = iota + 1
	// OwnershipRegained: the lock was taken again, nobody else having
	// held the store meanwhile, under a new epoch. Writes resume.
	OwnershipRegained
	// OwnershipTakenOver: another process took the store while the lock
	// was lost. Writes stay refused for the rest of the store's life.
	OwnershipTakenOver
)

// OwnershipChange is one change of a store's ownership.
type OwnershipChange struct {
	Kind ChangeKind
	// Holder is this process's holding (Lost, Regained: with the new
	// epoch) or the process that took the store over (TakenOver).
	Holder store.Holder
	// Err is why the lock was lost (Lost only).
	Err error
}

// owner is an open store's holding: its epoch, checked by every write,
// and the lock that keeps other owners out.
type owner struct {
	host     string
	pid      int
	onChange func(OwnershipChange)

	mu    sync.Mutex
	since time.Time
	epoch atomic.Int64
	// lost is set while the lock is not held; takenOver once another
	// process has taken the store (for good).
	lost      atomic.Bool
	takenOver atomic.Bool

	// release gives the lock up (SQLite); cancel and done end the
	// goroutine that keeps it (PostgreSQL: it gives the lock up).
	release func() error
	cancel  context.CancelFunc
	done    chan struct{}
}

func newOwner(o *Ownership) *owner {
	own := &owner{host: o.Host, pid: o.PID, onChange: o.OnChange}
	if own.host == "" {
		own.host, _ = os.Hostname()
	}
	if own.pid == 0 {
		own.pid = os.Getpid()
	}
	return own
}

// holder returns this process's holding.
func (o *owner) holder() store.Holder {
	o.mu.Lock()
	defer o.mu.Unlock()
	return store.Holder{Host: o.host, PID: o.pid, Since: o.since, Epoch: o.epoch.Load()}
}

func (o *owner) notify(c OwnershipChange) {
	if o.onChange != nil {
		o.onChange(c)
	}
}

// claim records this process as the owner under the next epoch, in its own
// transaction on db: called with the lock held.
func (o *owner) claim(ctx context.Context, db *sql.DB, d *dialect, now time.Time) error {
	var epoch int64
	err := db.QueryRowContext(ctx, d.sql(`INSERT INTO store_owner (id, epoch, host, pid, since) VALUES (1, 1, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET epoch = store_owner.epoch + 1, host = excluded.host, pid = excluded.pid, since = excluded.since
		RETURNING epoch`), o.host, o.pid, d.timeArg(now)).Scan(&epoch)
	if err != nil {
		return fmt.Errorf("record the store's owner: %w", err)
	}
	o.mu.Lock()
	o.since = now
	o.epoch.Store(epoch)
	o.mu.Unlock()
	return nil
}

// check runs first in every write transaction: it refuses the write while
// the lock is lost, and when the recorded epoch is not this store's (a
// stale writer's late commit). On PostgreSQL the row stays share-locked
// until the transaction ends, so a takeover waits for the writes that
// passed the check.
func (o *owner) check(ctx context.Context, q *sql.Tx, d *dialect) error {
	if err := o.refusing(); err != nil {
		return err
	}
	var epoch int64
	if err := q.QueryRowContext(ctx, `SELECT epoch FROM store_owner WHERE id = 1`+d.shareRow).Scan(&epoch); err != nil {
		return fmt.Errorf("sqlstore: check the store's owner: %w", err)
	}
	if mine := o.epoch.Load(); epoch != mine {
		return fmt.Errorf("sqlstore: this rmsd's epoch %d is stale (the store is at epoch %d: another rmsd has taken it over): %w", mine, epoch, store.ErrNotOwner)
	}
	return nil
}

// refusing returns why writes are refused without asking the database:
// the lock is lost, or the store was taken over.
func (o *owner) refusing() error {
	if o.takenOver.Load() {
		return fmt.Errorf("sqlstore: another rmsd has taken the store over; this one may not write to it again: %w", store.ErrNotOwner)
	}
	if o.lost.Load() {
		return fmt.Errorf("sqlstore: the store's lock is lost (its connection failed); writes are refused until it is held again: %w", store.ErrNotOwner)
	}
	return nil
}

// close stops the monitor, if any, and gives the lock up. The store's
// pools are closed before, so nothing of this process writes once another
// can take the lock.
func (o *owner) close() error {
	if o.cancel != nil {
		o.cancel()
		<-o.done
	}
	if o.release == nil {
		return nil
	}
	if err := o.release(); err != nil {
		return fmt.Errorf("release the store's lock: %w", err)
	}
	return nil
}

// adopt records own as s's owner under a new epoch, since now. On failure
// it closes s and gives own's lock up.
func adopt(ctx context.Context, s *Store, own *owner, now time.Time) error {
	if err := own.claim(ctx, s.write, s.d, now); err != nil {
		return errors.Join(err, s.Close(), own.close())
	}
	s.own = own
	return nil
}

// untilFree calls try until it takes the lock, fails otherwise than with
// store.ErrHeld, or wait has passed: then its last refusal is returned.
func untilFree[T any](ctx context.Context, wait time.Duration, try func() (T, error)) (T, error) {
	deadline := time.Now().Add(wait)
	poll := time.NewTicker(ownerRetryEvery)
	defer poll.Stop()
	for {
		v, err := try()
		if !errors.Is(err, store.ErrHeld) || !time.Now().Before(deadline) {
			return v, err
		}
		select {
		case <-ctx.Done():
			return v, err
		case <-poll.C:
		}
	}
}

// nowOf reads o's clock as the store would.
func nowOf(o Options) time.Time {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	return now().UTC().Truncate(time.Microsecond)
}
