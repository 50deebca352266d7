package store

import (
	"context"
	"fmt"
	"time"
)

// Cluster parents, in cluster mode. A job request whose nodes are in
// several racks is split into one request per rack, each admitted by its
// rack's owner as a job of its own; the member that received the request
// records a cluster parent naming each rack's job (or why the rack has
// none) before it answers the parent's id, so that any member can answer
// the parent's status from then on by asking each rack's job. The record
// is written once and never changed: the children's state is theirs.

// ClusterParent is one job request that spanned racks.
type ClusterParent struct {
	// ID is the parent's job id (a UUID, as every job id).
	ID string
	// Type is the job type of the racks' jobs, by its span name
	// ("firmware_update").
	Type string
	// Method is the RPC that made it ("/rack_manager.RackManager/BatchUpdateFirmware").
	Method string
	// Member is the member that received the request.
	Member string
	// CreatedAt is when it was recorded (set by the store, UTC).
	CreatedAt time.Time
	// Racks are the request's racks in the order the request first named
	// them.
	Racks []ClusterParentRack
}

// ClusterParentRack is one rack of a cluster parent: its job, or the
// in-band failure that left it without one.
type ClusterParentRack struct {
	RackID string
	// JobID is the job the rack's owner admitted, "" when it admitted
	// none.
	JobID string
	// Failure is why the rack has no job ("" when it has one).
	Failure string
}

// Validate checks what the store requires of a cluster parent.
func (p ClusterParent) Validate() error {
	if p.ID == "" || p.Type == "" || p.Method == "" || p.Member == "" || len(p.Racks) == 0 {
		return fmt.Errorf("cluster parent %q: id, type, method, member and at least one rack are required: %w", p.ID, ErrInvalid)
	}
	for _, r := range p.Racks {
		if r.RackID == "" || (r.JobID == "") == (r.Failure == "") {
			return fmt.Errorf("cluster parent %s: rack %q needs a rack id and exactly one of a job id and a failure: %w", p.ID, r.RackID, ErrInvalid)
		}
	}
	return nil
}

// ClusterParents is the store's record of cluster parents.
type ClusterParents interface {
	// CreateClusterParent records p (its CreatedAt set by the store) and
	// returns it as stored; ErrExists when p.ID is taken.
	CreateClusterParent(ctx context.Context, p ClusterParent) (ClusterParent, error)
	// ClusterParent returns the parent with id, or ErrNotFound.
	ClusterParent(ctx context.Context, id string) (ClusterParent, error)
	// ListClusterParents returns the newest limit parents (every one for
	// limit 0), newest first, each with its racks.
	ListClusterParents(ctx context.Context, limit int) ([]ClusterParent, error)
}
