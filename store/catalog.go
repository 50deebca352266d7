package store

import (
	"context"
	"time"
)

// Catalog is the firmware catalog and its apply history, as the firmware
// object RPCs and the artifact download workflow use them.
type Catalog interface {
	// CreateFirmwareObject stores a new object with its artifacts (see
	// FirmwareObject.Validate) and returns it as stored. ErrExists when the
	// id is taken, ErrInvalid when obj breaks a rule.
	CreateFirmwareObject(ctx context.Context, obj FirmwareObject) (FirmwareObject, error)
	// GetFirmwareObject returns one object with its artifacts, or
	// ErrNotFound.
	GetFirmwareObject(ctx context.Context, id string) (FirmwareObject, error)
	// ListFirmwareObjects returns the objects f selects, newest created
	// first (objects created at the same instant: the later stored first).
	ListFirmwareObjects(ctx context.Context, f ObjectFilter) ([]FirmwareObject, error)
	// DeleteFirmwareObject removes an object, its artifacts' records and
	// its default mark, and returns it as it was, so the caller can remove
	// the cached files. The apply history is kept. ErrNotFound when absent.
	DeleteFirmwareObject(ctx context.Context, id string) (FirmwareObject, error)

	// SetDefaultFirmwareObject makes the object the default of its hardware
	// type, in place of any other, atomically: a hardware type never has
	// two defaults, whatever runs concurrently. Returns the object, or
	// ErrNotFound.
	SetDefaultFirmwareObject(ctx context.Context, id string) (FirmwareObject, error)
	// DefaultFirmwareObject returns the default object of a hardware type,
	// or ErrNotFound when it has none.
	DefaultFirmwareObject(ctx context.Context, hardwareType string) (FirmwareObject, error)

	// SetObjectAvailability records whether an object may be applied and,
	// when not, why (reason must be empty when available). ErrNotFound when
	// the object is absent.
	SetObjectAvailability(ctx context.Context, id string, available bool, reason string) error
	// SetArtifactStatus records where one artifact's download stands (see
	// ArtifactStatus.Validate). ErrNotFound when the object or artifact is
	// absent: the object was deleted, and the download should stop.
	SetArtifactStatus(ctx context.Context, objectID, name string, status ArtifactStatus) error

	// TouchFirmwareDownloads records that downloader is at work now on
	// the downloads (or re-verifications) of the objects ids: of those,
	// the ones downloader still downloads get their heartbeat stamped, so
	// that no other member takes them over (ClaimFirmwareDownload). Ids
	// absent or downloaded by another member are passed over.
	TouchFirmwareDownloads(ctx context.Context, downloader string, ids []string) error
	// ClaimFirmwareDownload moves object id's download from member from
	// to member to, a compare-and-set: only if from is still its
	// Downloader, the object is still interrupted (unavailable with no
	// reason), its heartbeat (created, or TouchFirmwareDownloads) is at
	// least quiet old, and from's cluster member row, if it has one, was
	// not written within quiet either (a member just started again keeps
	// its objects). It reports whether it moved it; of several members
	// claiming one object at once exactly one does. The heartbeat is
	// stamped anew on a move. quiet must be positive.
	ClaimFirmwareDownload(ctx context.Context, id, from, to string, quiet time.Duration) (bool, error)

	// RecordApply appends a record to the apply history and returns it
	// with Seq and AppliedAt set.
	RecordApply(ctx context.Context, r ApplyRecord) (ApplyRecord, error)
	// ListApplyHistory returns the records f selects, newest first.
	ListApplyHistory(ctx context.Context, f HistoryFilter) ([]ApplyRecord, error)
}
