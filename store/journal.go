package store

import (
	"context"
	"fmt"
	"time"
)

// Journal is the append-only event log the job engine writes before an
// event's effect becomes visible and replays at start. It lives in the
// same store as the catalog so that an event and the catalog or history
// change it describes commit together (Store.Update). Snapshots, replay
// and compaction belong to the journal itself, not to the store.
type Journal interface {
	// AppendEvents appends a batch in order, in one commit, and returns the
	// events with Seq and Recorded set. Appends are serialised: events
	// become visible in Seq order, so a reader that has seen Seq n has
	// seen every event before it. An empty batch does nothing.
	AppendEvents(ctx context.Context, events []Event) ([]Event, error)
	// ReadEvents returns up to limit events with Seq greater than after,
	// in Seq order (limit <= 0: all of them).
	ReadEvents(ctx context.Context, after int64, limit int) ([]Event, error)
	// CompactEvents appends snapshot as AppendEvents does and removes every
	// event older than it, in one commit: a reader sees either the old
	// journal or the snapshot followed by what is appended after it, never
	// a journal without either. It returns the snapshot with Seq and
	// Recorded set; Seq keeps growing (it is never reused). An empty
	// snapshot is refused (it would erase the journal).
	CompactEvents(ctx context.Context, snapshot []Event) ([]Event, error)
}

// Event is one journal entry: an opaque payload of a kind its writer
// knows how to decode.
type Event struct {
	// Seq is assigned by the store: increasing and never reused, also
	// after older events are removed.
	Seq int64
	// Kind names the payload's type, e.g. "JobCreated". Required.
	Kind string
	// Data is the encoded event.
	Data []byte
	// Recorded is set by the store when the event is appended.
	Recorded time.Time
	// Jobs are the ids of jobs whose creation this event records; the
	// rack journal indexes them (RackOwners.JobRack). Not read back: an
	// event read from the journal has none.
	Jobs []string
}

// Validate checks an event about to be appended.
func (e Event) Validate() error {
	if e.Kind == "" {
		return fmt.Errorf("journal event: empty kind: %w", ErrInvalid)
	}
	return nil
}
