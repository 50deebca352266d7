package rmsserver

import (
	"context"

	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/messages"
)

// Deps are what the handlers call. A nil dependency makes its RPCs answer
// UNAVAILABLE rather than panic.
type Deps struct {
	// Version is the build version GetVersion answers.
	Version string
	// Jobs is the job engine: job state, admission, and the leases that
	// keep synchronous operations off nodes a job holds.
	Jobs JobEngine
	// Racks holds the nodes registered with CreateNodes.
	Racks *racks.Registry
	// Nodes runs hardware operations (power, device info, firmware
	// inventory, runbooks).
	Nodes *nodeops.Runner
	// SwitchNVUE is the shared NVUE connection pool runbooks reach NVOS
	// switch APIs through directly (the one the node runner's adapters use).
	SwitchNVUE *nvue.Pool
}

// JobEngine is what the handlers ask of the job engine (*actors.Engine
// implements it). It is the one owner of which node is busy: handlers never
// decide that themselves.
type JobEngine interface {
	JobService
	// CreateReserved admits a job that also holds res (its rack and nodes,
	// as reservation children), all or nothing, and starts wf.
	CreateReserved(ctx context.Context, spec messages.JobSpec, wf messages.Workflow, res *messages.Reservation) (messages.CreateJobReply, error)
	// Cancel stops a job's workflow; its nodes stay held until it ends.
	Cancel(ctx context.Context, id string) (bool, error)
	// Lease holds nodes and racks for a synchronous operation.
	Lease(ctx context.Context, req messages.AcquireLease) (messages.AcquireLeaseReply, error)
	// Release gives a lease back.
	Release(ctx context.Context, leaseID string) error
}
