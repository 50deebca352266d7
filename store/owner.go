package store

import (
	"errors"
	"fmt"
	"time"
)

// One writer per store. A daemon holds its store for its whole life, so
// that two daemons on one database never both replay the journal and run
// jobs on the same fleet: opening a store as its owner takes an exclusive
// lock (the engine's own kind) and a new epoch, every later commit checks
// in its transaction that the stored epoch is still its own, and a second
// owner is refused, told who holds the store.

var (
	// ErrHeld: another process holds the store; nothing was changed. The
	// error is a *HeldError naming the holder.
	ErrHeld = errors.New("store: held by another rmsd")
	// ErrNotOwner: this process no longer owns the store (its lock was
	// lost, or another process has taken the store over since), so the
	// write was refused and nothing of it was kept.
	ErrNotOwner = errors.New("store: this rmsd does not own the store")
)

// Holder names the process that owns a store.
type Holder struct {
	// Host is the holder's host name.
	Host string
	// PID is the holder's process id on Host.
	PID int
	// Since is when it took the store, in UTC.
	Since time.Time
	// Epoch numbers the acquisitions of the store: each one gets a higher
	// epoch than every one before it. Zero when unknown.
	Epoch int64
}

// String describes the holder for an operator: "rmsd on host H pid P since
// T".
func (h Holder) String() string {
	if h.Host == "" && h.PID == 0 {
		return "another rmsd (its host and pid are not recorded yet)"
	}
	return fmt.Sprintf("rmsd on host %s pid %d since %s", h.Host, h.PID, h.Since.UTC().Format(time.RFC3339))
}

// HeldError is the refusal to open a store another process holds. It
// matches ErrHeld (errors.Is).
type HeldError struct {
	// Location is the store's Info.Location: never a secret.
	Location string
	// Holder is the process holding it, as far as it recorded itself.
	Holder Holder
}

// Error implements error.
func (e *HeldError) Error() string {
	return fmt.Sprintf("store %s is held by %s", e.Location, e.Holder)
}

// Is reports whether target is ErrHeld.
func (e *HeldError) Is(target error) bool { return target == ErrHeld }

// Owned is implemented by a store opened as its process's own.
type Owned interface {
	// Owner returns this process's holding of the store: its host, pid,
	// since and current epoch.
	Owner() Holder
}
