package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Rack ownership, in cluster mode. Several rmsd members share one store,
// and each rack is owned by one member at a time: the member holds the
// rack's lease, under an epoch that grows with every acquisition, and
// renews it before it ends. A lease that has ended, or been released, can
// be taken by any member, under the next epoch. Every write a member
// makes for a rack's jobs carries the epoch it holds, and is refused
// (ErrNotOwner) once that epoch is no longer the rack's or its lease has
// ended: this is the store's single-writer lock, per rack. Lease times
// are the database server's clock, so members' clocks need not agree.

// ErrRackHeld: another member owns the rack, under a lease that has not
// ended; nothing was changed. The error is a *RackHeldError.
var ErrRackHeld = errors.New("store: rack owned by another member")

// ErrClusterUnsupported: the store's engine cannot be shared by a cluster
// (SQLite).
var ErrClusterUnsupported = errors.New("store: cluster mode needs the PostgreSQL store")

// RackLease is a member's ownership of one rack.
type RackLease struct {
	// RackID is the rack owned.
	RackID string
	// Member owns the rack.
	Member string
	// Epoch numbers the rack's acquisitions: each is higher than every
	// earlier one, whichever member made it.
	Epoch int64
	// Since is when this epoch began (the server's clock, UTC).
	Since time.Time
	// Expires is when the lease ends unless renewed (the server's clock,
	// UTC).
	Expires time.Time
}

// RackHeldError is the refusal to acquire a rack another member owns. It
// matches ErrRackHeld (errors.Is).
type RackHeldError struct {
	// Owner is the current lease.
	Owner RackLease
}

// Error implements error.
func (e *RackHeldError) Error() string {
	return fmt.Sprintf("rack %s is owned by member %s under epoch %d until %s", e.Owner.RackID, e.Owner.Member,
		e.Owner.Epoch, e.Owner.Expires.UTC().Format(time.RFC3339Nano))
}

// Is reports whether target is ErrRackHeld.
func (e *RackHeldError) Is(target error) bool { return target == ErrRackHeld }

// RackOwners is the store's record of rack ownership.
type RackOwners interface {
	// AcquireRack makes member the owner of rackID under the next epoch,
	// with a lease of ttl, when nobody owns it, its lease has ended, or
	// member itself owns it (a restarted member, whose earlier epoch is
	// fenced off from then on). Otherwise it returns a *RackHeldError.
	AcquireRack(ctx context.Context, rackID, member string, ttl time.Duration) (RackLease, error)
	// RenewRack extends lease by ttl from now if its epoch is still the
	// rack's and it has not ended; otherwise ErrNotOwner.
	RenewRack(ctx context.Context, lease RackLease, ttl time.Duration) (RackLease, error)
	// ReleaseRack ends lease at once if it is still the rack's, so that
	// another member may take the rack without waiting; a lease no longer
	// the rack's is left alone (no error).
	ReleaseRack(ctx context.Context, lease RackLease) error
	// RackOwner returns the rack's latest lease (ended or not), or
	// ErrNotFound when the rack was never owned.
	RackOwner(ctx context.Context, rackID string) (RackLease, error)
	// UpdateRack runs fn in one transaction, like Store.Update, after
	// checking in it that lease is still the rack's and unexpired; the row
	// stays share-locked until commit, so an acquisition waits for the
	// writes that passed the check. A stale or ended lease gets
	// ErrNotOwner and fn does not run.
	UpdateRack(ctx context.Context, lease RackLease, fn func(tx Tx) error) error
	// AppendRackEvents is AppendEvents on the rack's own journal stream
	// (lease.RackID), fenced by lease as UpdateRack. In the same
	// transaction it records the rack of every job named in the events'
	// Jobs (JobRack).
	AppendRackEvents(ctx context.Context, lease RackLease, events []Event) ([]Event, error)
	// ReadRackEvents returns up to limit events of rackID's stream with
	// Seq greater than after, in Seq order (limit <= 0: all). Not fenced:
	// any member may read.
	ReadRackEvents(ctx context.Context, rackID string, after int64, limit int) ([]Event, error)
	// CompactRackEvents is CompactEvents on the rack's stream, fenced by
	// lease as AppendRackEvents; the other streams are left alone.
	CompactRackEvents(ctx context.Context, lease RackLease, snapshot []Event) ([]Event, error)
	// JobRack returns the rack whose stream recorded the creation of
	// jobID, or ErrNotFound if none did (or its record was pruned).
	JobRack(ctx context.Context, jobID string) (string, error)
	// PruneJobRacks removes the job → rack records made before olderThan
	// and returns how many it removed.
	PruneJobRacks(ctx context.Context, olderThan time.Time) (int, error)
}
