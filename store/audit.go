package store

import (
	"context"
	"fmt"
	"time"
)

// AuditRecord is one entry of the audit log: who called which mutating
// RPC on what, and how it ended. It never holds a request body, so never
// a credential: only ids.
type AuditRecord struct {
	// Seq is assigned by the store: unique and increasing in the order the
	// records were appended. It is the read service's page cursor.
	Seq int64
	// Time is when the RPC was received, set by the recorder (records
	// reach the store asynchronously). Required.
	Time time.Time
	// Caller is the caller's identity as one line (a certificate's
	// subject and SANs, else "peer host:port").
	Caller string
	// CallerVerified says the identity is a verified client certificate;
	// the fields below are then its subject, CN, OUs and SANs.
	CallerVerified bool
	CallerSubject  string
	CallerCN       string
	CallerOU       []string
	CallerDNS      []string
	CallerURIs     []string
	// CallerAddr is the peer's network address.
	CallerAddr string
	// Method is the RPC's full method, "/rack_manager.RackManager/SetPowerState".
	// Required.
	Method string
	// RackIDs and NodeIDs are the racks and nodes the request named.
	RackIDs []string
	NodeIDs []string
	// JobIDs are the jobs the reply named (a job, or a batch's parent).
	JobIDs []string
	// Outcome is "OK", "FAILURE" (an in-band failure) or the name of the
	// gRPC status code the RPC ended with ("PERMISSION_DENIED"). Required.
	Outcome string
	// Reason is the in-band failure's reason or the gRPC status message.
	Reason string
}

// AuditFilter selects audit records; the conditions are AND-ed and a zero
// field selects everything.
type AuditFilter struct {
	// RackID keeps records that named this rack.
	RackID string
	// NodeID keeps records that named this node.
	NodeID string
	// Since keeps records at or after this time.
	Since time.Time
	// BeforeSeq keeps records older than this Seq (the next page).
	BeforeSeq int64
	// Limit caps the records returned; zero or less means no cap.
	Limit int
}

// AuditLog is the store's audit table. Records are listed newest first
// (by Seq). Implemented by sqlstore.Store.
type AuditLog interface {
	// AppendAudit writes records in one transaction, in order, and
	// returns them with Seq set.
	AppendAudit(ctx context.Context, records []AuditRecord) ([]AuditRecord, error)
	// ListAudit returns the records f selects, newest first.
	ListAudit(ctx context.Context, f AuditFilter) ([]AuditRecord, error)
	// PruneAudit deletes the records older than before and says how many.
	PruneAudit(ctx context.Context, before time.Time) (int64, error)
}

// Validate checks a record about to be written.
func (r AuditRecord) Validate() error {
	switch {
	case r.Time.IsZero():
		return fmt.Errorf("audit record of %q: no time: %w", r.Method, ErrInvalid)
	case r.Method == "":
		return fmt.Errorf("audit record: empty method: %w", ErrInvalid)
	case r.Outcome == "":
		return fmt.Errorf("audit record of %q: empty outcome: %w", r.Method, ErrInvalid)
	}
	return nil
}
