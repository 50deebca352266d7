package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// FirmwareObject is one catalog entry: a firmware manifest ("SOT JSON") as
// a caller added it, and the state of its cached artifacts.
type FirmwareObject struct {
	// ID is "{ProductName}_{Name}" of the manifest's milestone, derived by
	// the caller. Required; unique among stored objects, and free again
	// once the object is deleted.
	ID string
	// HardwareType is the hardware class the object applies to; defaults
	// are scoped by it. May be empty (that is a class of its own).
	HardwareType string
	// ConfigJSON is the manifest exactly as given. Required; must be JSON.
	ConfigJSON string
	// Available is true once every required artifact is cached and the
	// object may be applied. The caller decides; the store records it.
	Available bool
	// UnavailableReason says why an object is not available (a failed
	// download, a checksum mismatch); empty while downloads are under way.
	// Must be empty when Available is true.
	UnavailableReason string
	// Artifacts are the files the object needs cached, in the caller's
	// order. Names must be unique within the object.
	Artifacts []Artifact
	// Downloader is the cluster member that downloads the object's
	// artifacts (the one that received AddFirmwareObject), "" for a single
	// rmsd. At start a member re-verifies only the interrupted downloads
	// it ran itself (and those of no member): another member's may still
	// be under way. Written on create; changed only when a member takes
	// over the interrupted download of a member that is gone
	// (Catalog.ClaimFirmwareDownload).
	Downloader string

	// Set by the store; ignored on create.

	// IsDefault is true when this is the default object of HardwareType.
	IsDefault bool
	// Created is when the object was stored; Updated when it, or one of
	// its artifacts, last changed.
	Created, Updated time.Time
}

// Artifact is one file a firmware object needs cached before it can be
// applied: where it comes from, what it must hash to, and where its copy
// is.
type Artifact struct {
	// Name identifies the artifact within its object: the cache file name.
	// Required.
	Name string
	// Location is where it is downloaded from: a URL or a local path, as
	// the manifest gives it.
	Location string
	// SHA256 is the expected digest in hex, or empty when the manifest
	// gives none. Stored in lower case.
	SHA256 string
	// FirmwareType is the artifact's channel ("prod", "dev"), as the
	// manifest's entry gives it.
	FirmwareType string
	// ArtifactStatus is where its download stands; the zero value is
	// pending.
	ArtifactStatus
	// Updated is when the artifact last changed (set by the store).
	Updated time.Time
}

// ArtifactStatus is the part of an artifact the download workflow changes.
type ArtifactStatus struct {
	// State is where the download stands; empty means pending.
	State ArtifactState
	// LocalPath is where the cached copy is (or is being written).
	// Required when State is ready.
	LocalPath string
	// Error is why the last download failed. Required when State is
	// failed, empty otherwise.
	Error string
}

// ArtifactState is where an artifact's download stands.
type ArtifactState string

// The artifact states. pending → downloading → ready | failed; a failed or
// ready artifact may be downloaded again.
const (
	ArtifactPending     ArtifactState = "pending"
	ArtifactDownloading ArtifactState = "downloading"
	ArtifactReady       ArtifactState = "ready"
	ArtifactFailed      ArtifactState = "failed"
)

// ObjectFilter selects firmware objects; the conditions are AND-ed and a
// zero field selects everything.
type ObjectFilter struct {
	// OnlyAvailable keeps only available objects.
	OnlyAvailable bool
	// HardwareType keeps only objects of this hardware type; "" keeps all.
	HardwareType string
}

// Validate checks an object about to be created, and returns it with its
// defaults filled in (pending artifacts, lower-case digests).
func (o FirmwareObject) Validate() (FirmwareObject, error) {
	if o.ID == "" {
		return o, fmt.Errorf("firmware object: empty id: %w", ErrInvalid)
	}
	if !json.Valid([]byte(o.ConfigJSON)) {
		return o, fmt.Errorf("firmware object %q: config_json is not JSON: %w", o.ID, ErrInvalid)
	}
	if o.Available && o.UnavailableReason != "" {
		return o, fmt.Errorf("firmware object %q: available with an unavailability reason: %w", o.ID, ErrInvalid)
	}
	arts := make([]Artifact, len(o.Artifacts))
	seen := make(map[string]bool, len(o.Artifacts))
	for i, a := range o.Artifacts {
		if a.Name == "" {
			return o, fmt.Errorf("firmware object %q: artifact %d has no name: %w", o.ID, i, ErrInvalid)
		}
		if seen[a.Name] {
			return o, fmt.Errorf("firmware object %q: artifact %q listed twice: %w", o.ID, a.Name, ErrInvalid)
		}
		seen[a.Name] = true
		digest, err := normalSHA256(a.SHA256)
		if err != nil {
			return o, fmt.Errorf("firmware object %q: artifact %q: %w", o.ID, a.Name, err)
		}
		a.SHA256 = digest
		if a.ArtifactStatus, err = a.ArtifactStatus.Validate(); err != nil {
			return o, fmt.Errorf("firmware object %q: artifact %q: %w", o.ID, a.Name, err)
		}
		arts[i] = a
	}
	o.Artifacts = arts
	return o, nil
}

// Validate checks a status and returns it with an empty state read as
// pending.
func (s ArtifactStatus) Validate() (ArtifactStatus, error) {
	if s.State == "" {
		s.State = ArtifactPending
	}
	switch s.State {
	case ArtifactPending, ArtifactDownloading, ArtifactReady, ArtifactFailed:
	default:
		return s, fmt.Errorf("unknown artifact state %q: %w", s.State, ErrInvalid)
	}
	switch {
	case s.State == ArtifactReady && s.LocalPath == "":
		return s, fmt.Errorf("state ready without a local path: %w", ErrInvalid)
	case s.State == ArtifactFailed && s.Error == "":
		return s, fmt.Errorf("state failed without an error: %w", ErrInvalid)
	case s.State != ArtifactFailed && s.Error != "":
		return s, fmt.Errorf("state %s with an error: %w", s.State, ErrInvalid)
	}
	return s, nil
}

// normalSHA256 returns digest in lower case, or an error when it is
// neither empty nor 64 hex digits.
func normalSHA256(digest string) (string, error) {
	if digest == "" {
		return "", nil
	}
	if _, err := hex.DecodeString(digest); err != nil || len(digest) != 2*sha256.Size {
		return "", fmt.Errorf("sha256 %q is not 64 hex digits: %w", digest, ErrInvalid)
	}
	return strings.ToLower(digest), nil
}
