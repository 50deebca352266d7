package member

import (
	"context"

	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/store"
)

// RackService is one rack's work on the member that owns it: its job
// engine and the handlers that answer the calls other members forward to
// the rack. Config.OpenRack builds it once the member holds the rack's
// lease; the rack's grain serves forwarded calls with it, and stops it
// when the rack leaves this member.
type RackService interface {
	// Serve answers one forwarded call under ctx (the caller's deadline;
	// the grain ends it once Serve has returned).
	// It is called from many goroutines at once.
	Serve(ctx context.Context, fwd *rackpb.Forward) *rackpb.ForwardReply
	// InFlight returns the rack's jobs that have not ended. It may be
	// called while Close runs.
	InFlight() int
	// BeginDrain refuses new jobs for the rack from now on; the running
	// ones go on. It may be called while Close runs.
	BeginDrain()
	// Close hands the rack over: it stops the engine, interrupting the
	// jobs still running when ctx ends, and writes the last of the rack's
	// journal. The grain calls it from a goroutine of its own (the
	// hand-over's) and releases the lease only after it returns.
	Close(ctx context.Context) error
	// Abandon stops acting on the rack at once, writing nothing more:
	// the member no longer holds its lease.
	Abandon(cause error)
}

// OpenRack builds the service of rackID once this member holds the
// rack's lease. lease reports the lease and whether the member still acts
// under it; previousOwner is the member that owned the rack before ("" for
// none; this member itself after its own restart), whose unfinished jobs
// the service's replay interrupts. The service must have sealed them
// before it returns: the grain serves calls from then on.
type OpenRack func(ctx context.Context, rackID string, lease func() (store.RackLease, bool), previousOwner string) (RackService, error)
