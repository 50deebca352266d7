// Package rackjournal is one rack's job journal in cluster mode: the
// store.Journal an actors.Engine writes when it runs a rack's jobs on the
// rack's owner. It is the rack's own stream in the shared store, every
// write fenced by the member's current lease of the rack, so that once the
// rack has a new owner the old engine's writes are refused and the new
// owner's engine, replaying the stream, sees everything the old one wrote.
package rackjournal

import (
	"context"
	"fmt"

	"github.com/rmsd/rmsd/store"
)

// journal is a rack's stream, written under the lease lease gives.
type journal struct {
	st     store.RackOwners
	rackID string
	lease  func() (store.RackLease, bool)
}

// New returns the journal of rackID in st. lease returns the member's
// current lease of the rack, false when it holds none: appends and
// compactions are then refused with an error wrapping store.ErrNotOwner
// and nothing is written. Reads need no lease.
func New(st store.RackOwners, rackID string, lease func() (store.RackLease, bool)) store.Journal {
	return &journal{st: st, rackID: rackID, lease: lease}
}

// current returns the lease to write under.
func (j *journal) current() (store.RackLease, error) {
	l, ok := j.lease()
	if !ok {
		return store.RackLease{}, fmt.Errorf("rack %s journal: this member holds no lease of the rack: %w", j.rackID, store.ErrNotOwner)
	}
	if l.RackID != j.rackID {
		return store.RackLease{}, fmt.Errorf("rack %s journal: the lease given is of rack %s: %w", j.rackID, l.RackID, store.ErrNotOwner)
	}
	return l, nil
}

// AppendEvents implements store.Journal: AppendRackEvents under the
// current lease.
func (j *journal) AppendEvents(ctx context.Context, events []store.Event) ([]store.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	l, err := j.current()
	if err != nil {
		return nil, err
	}
	return j.st.AppendRackEvents(ctx, l, events)
}

// ReadEvents implements store.Journal: the rack's stream.
func (j *journal) ReadEvents(ctx context.Context, after int64, limit int) ([]store.Event, error) {
	return j.st.ReadRackEvents(ctx, j.rackID, after, limit)
}

// CompactEvents implements store.Journal: CompactRackEvents under the
// current lease.
func (j *journal) CompactEvents(ctx context.Context, snapshot []store.Event) ([]store.Event, error) {
	l, err := j.current()
	if err != nil {
		return nil, err
	}
	return j.st.CompactRackEvents(ctx, l, snapshot)
}
