package rmsserver

import (
	"context"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
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
	// Catalog is the firmware object catalog.
	Catalog FirmwareCatalog
}

// FirmwareCatalog is what the firmware object RPCs ask of the catalog
// (*catalog.Service implements it). Its errors match catalog.ErrInvalid,
// ErrNotFound, ErrExists or ErrClosed, or are failures of its storage.
type FirmwareCatalog interface {
	Add(ctx context.Context, req catalog.AddRequest) (catalog.Object, error)
	Get(ctx context.Context, id string) (catalog.Object, error)
	List(ctx context.Context, f store.ObjectFilter) ([]catalog.Object, error)
	Delete(ctx context.Context, id string) error
	SetDefault(ctx context.Context, id string) (catalog.Object, error)
	History(ctx context.Context, f store.HistoryFilter) ([]catalog.HistoryRecord, error)
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
