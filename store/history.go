package store

import (
	"fmt"
	"time"
)

// ApplyRecord is one entry of the apply history: a stored firmware object
// (or its switch system image) applied to nodes of a rack. Records outlive
// the object they name; whether it is still in the catalog is for the
// reader to find out (GetFirmwareObjectHistory's firmware_available).
type ApplyRecord struct {
	// Seq is assigned by the store: unique and increasing. Object ids are
	// reused after a delete, so only Seq tells records apart.
	Seq int64
	// ObjectID names the firmware object applied. Required.
	ObjectID string
	// RackID is the rack whose nodes it was applied to. Required.
	RackID string
	// NodeIDs are those nodes, in the caller's order.
	NodeIDs []string
	// FirmwareType is the channel applied ("prod", "dev").
	FirmwareType string
	// HardwareType is the object's hardware type.
	HardwareType string
	// JobID is the parent job that carries the update.
	JobID string
	// Operation is what applied it: the RPC, e.g.
	// "ApplyStoredFirmwareObject" or "ApplyStoredSwitchSystemImage".
	Operation string
	// Requester is who asked, when known (the client's certificate
	// subject); empty otherwise.
	Requester string
	// AppliedAt is set by the store when the record is written.
	AppliedAt time.Time
}

// HistoryFilter selects apply records; the conditions are AND-ed and a
// zero field selects everything.
type HistoryFilter struct {
	// ObjectID keeps only records of this object id; "" keeps all.
	ObjectID string
	// RackIDs keeps only records of these racks; empty keeps all.
	RackIDs []string
}

// Validate checks a record about to be written.
func (r ApplyRecord) Validate() error {
	if r.ObjectID == "" {
		return fmt.Errorf("apply record: empty object id: %w", ErrInvalid)
	}
	if r.RackID == "" {
		return fmt.Errorf("apply record of %q: empty rack id: %w", r.ObjectID, ErrInvalid)
	}
	return nil
}
