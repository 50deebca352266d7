package catalog

import (
	"github.com/rmsd/rmsd/feed"
	"github.com/rmsd/rmsd/store"
)

// DefaultFeedBuffer is a subscription's buffer when Subscribe is asked for
// none.
const DefaultFeedBuffer = 64

// ChangeKind says what a Change changed.
type ChangeKind uint8

// The kinds of change the catalog publishes.
const (
	// ObjectAdded: Add stored the object (Available says whether it is
	// available at once; IsDefault whether it became its hardware type's
	// default, taking the mark from any other).
	ObjectAdded ChangeKind = iota + 1
	// ObjectDeleted: Delete removed the object.
	ObjectDeleted
	// DefaultChanged: SetDefault made the object the default of its
	// hardware type, in place of any other.
	DefaultChanged
	// ArtifactChanged: an artifact's download state was recorded
	// (downloading, ready or failed; Artifact and State say which).
	ArtifactChanged
	// AvailabilityChanged: the object's download or re-verification ended
	// and its availability was recorded (Available).
	AvailabilityChanged
)

// String is the kind's name as the console's event stream carries it.
func (k ChangeKind) String() string {
	switch k {
	case ObjectAdded:
		return "added"
	case ObjectDeleted:
		return "deleted"
	case DefaultChanged:
		return "default"
	case ArtifactChanged:
		return "artifact"
	case AvailabilityChanged:
		return "availability"
	default:
		return "unknown"
	}
}

// Change is one change the catalog recorded in the store. It carries ids
// and states only: never a location, a token or a manifest.
type Change struct {
	Kind     ChangeKind
	ObjectID string
	// HardwareType is the object's hardware type (ObjectAdded,
	// ObjectDeleted, DefaultChanged).
	HardwareType string
	// Artifact and State are the artifact and its new state
	// (ArtifactChanged).
	Artifact string
	State    store.ArtifactState
	// Available is the object's availability (ObjectAdded,
	// AvailabilityChanged).
	Available bool
	// IsDefault is whether the object is its hardware type's default
	// (ObjectAdded, DefaultChanged).
	IsDefault bool
}

// Subscription is one reader of the catalog's change feed: C delivers the
// changes in the order they were recorded (the order of two changes
// recorded at the same time by two goroutines is either), and is closed by
// Close, by the Service's Close, or when the subscriber fell behind its
// buffer: then Dropped is true and changes were lost, so reread the
// catalog (List) and subscribe again. A change is published just after the
// store recorded it, on the goroutine that recorded it, and never waits,
// so a slow reader costs a download one failed send, never a stall.
type Subscription = feed.Subscription[Change]

// Subscribe returns a subscription to the catalog's changes, buffered up
// to buffer changes (DefaultFeedBuffer when 0): every object added or
// deleted, every default set, every artifact download state and every
// availability the Service records. Subscribe first, then read the catalog
// (List): whatever changes after the read arrives on C. Close it when
// done. Changes another process makes to a shared store are not seen.
func (s *Service) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultFeedBuffer
	}
	return s.feed.Subscribe(buffer)
}
