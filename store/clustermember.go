package store

import (
	"context"
	"errors"
	"time"
)

// Cluster members' views, in cluster mode. Each member keeps one row: the
// actor system of its current process, its remote address, and the other
// members its process sees (protoactor's topology, by actor system id).
// A member's start takes the next epoch of its row; every later write
// names that epoch and is refused once a newer start has taken the row,
// so a process that has been replaced cannot overwrite its successor's
// view. After a partition between members heals, the two sides read each
// other's views here to agree on which side yields (docs/cluster.md,
// "Partition between members").

// ErrMemberSuperseded: the member's row has been taken by a later start of
// the same member id (a newer epoch); nothing was written.
var ErrMemberSuperseded = errors.New("store: member row taken by a later start of the member")

// MemberView is one member's row.
type MemberView struct {
	// Member is the member id ([cluster] member_id).
	Member string
	// Epoch grows with every start of the member.
	Epoch int64
	// System is the actor system id of the member's current process, and
	// Address its remote address.
	System, Address string
	// View is the actor system ids of the other members the process
	// sees, sorted.
	View []string
	// Left says the process has stopped taking part (it left the cluster
	// or fenced itself).
	Left bool
	// UpdatedAt is the row's last write (the server's clock, UTC).
	UpdatedAt time.Time
}

// ClusterMembers is the store's record of the members' views.
type ClusterMembers interface {
	// JoinMember starts a new epoch of member's row for the process with
	// actor system system at address, with an empty view, and returns it.
	JoinMember(ctx context.Context, member, system, address string) (MemberView, error)
	// WriteMemberView sets the view and the Left flag of v.Member's row
	// if v.Epoch is still the row's, else ErrMemberSuperseded.
	WriteMemberView(ctx context.Context, v MemberView) error
	// MemberViews returns every member's row.
	MemberViews(ctx context.Context) ([]MemberView, error)
}
