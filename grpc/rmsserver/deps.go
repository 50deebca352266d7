package rmsserver

import (
	"context"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/fabricsync"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
	"github.com/rmsd/rmsd/hw/fwupdate"
	"github.com/rmsd/rmsd/hw/nicflash"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvssvt"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/hw/spdm"
	"github.com/rmsd/rmsd/hw/switchadmin"
	"github.com/rmsd/rmsd/hw/switchcert"
	"github.com/rmsd/rmsd/hw/switchimage"
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
	// MaxBatchNodes is [workflows] max_batch_nodes: the most nodes one
	// request may name (DefaultMaxBatchNodes when zero).
	MaxBatchNodes int
	// LeaseTTL is the TTL of the leases synchronous operations take (ten
	// minutes when zero); each operation's context ends at half of it.
	LeaseTTL time.Duration
	// Racks holds the nodes registered with CreateNodes.
	Racks *racks.Registry
	// Nodes runs hardware operations (power, device info, firmware
	// inventory, runbooks).
	Nodes *nodeops.Runner
	// Catalog is the firmware object catalog.
	Catalog FirmwareCatalog
	// FirmwareDir is [workflows] firmware_dir: the filenames of direct
	// firmware updates are confined to it.
	FirmwareDir string
	// FirmwareTiming tunes the waits of firmware update jobs (zero fields
	// take upstream's defaults).
	FirmwareTiming fwupdate.Timing
	// NICFlasher flashes in-band NIC firmware (CX7, CX8, BF3_NIC) over a
	// compute node's host; nil fails such targets in the job.
	NICFlasher *nicflash.Flasher
	// FlintProfiles are the flint_devices counts of
	// [workflows.expected_inventory_profiles], by profile name.
	FlintProfiles map[string]nicflash.Counts
	// SwitchAdminTiming tunes the waits of switch password and factory
	// reset jobs (zero fields take upstream's defaults).
	SwitchAdminTiming switchadmin.Timing
	// SwitchImageTiming tunes the waits of switch system image jobs (zero
	// fields take upstream's defaults).
	SwitchImageTiming switchimage.Timing
	// DrainWindow is [workflows] drain_timeout_seconds: a cold reboot
	// past shelves-off that a shutdown would cut short powers the shelves
	// back on before it ends (0: only a hard stop ends such a run).
	DrainWindow time.Duration
	// SpdmTiming bounds SPDM evidence collection (zero fields take the
	// defaults: a 15 min batch deadline).
	SpdmTiming spdm.Timing
	// SwitchCert is where switch certificate jobs find their material and
	// how they run.
	SwitchCert SwitchCertConfig
	// Fabric is how the scale-up fabric RPCs reach switches (NVUE pool, SSH,
	// NMX-C and gNMI options, waits); nil makes them answer UNAVAILABLE.
	// Switch certificate jobs bind the NMX services and make the NMX-C and
	// gNMI test hellos with it (nil: they cannot).
	Fabric *fabric.Options
	// FabricSwitch, when set, builds the fabric clients of the V2 reconcile
	// in place of fabric.New with Fabric (a test wraps them).
	FabricSwitch func(n hw.Node, domain string) (fabricsync.Switch, error)
	// InventoryProfiles are [workflows.expected_inventory_profiles]: the
	// firmware inventory ids each profile requires, by profile name.
	InventoryProfiles map[string][]string
	// Validation runs the NVSSVT scans of StartSystemValidation; nil or
	// without an executable, the RPC refuses every node in band.
	Validation *nvssvt.Runner
}

// SwitchCertConfig is the [switches] configuration of the switch mTLS
// RPCs.
type SwitchCertConfig struct {
	// CertRoot is switch_cert_root: <CertRoot>/<domain>/{ca.pem,
	// client.pem, client.key} is installed on switches.
	CertRoot string
	// DefaultDomain is default_switch_domain, for requests without one.
	DefaultDomain string
	// Insecure is insecure_switch: ConfigureSwitchCertificate then moves
	// services back to plain TLS instead.
	Insecure bool
	// Pacing tunes the jobs' pauses (zero fields take upstream's).
	Pacing switchcert.Deps
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
	// ForApply returns the available object an ApplyStored* request names.
	ForApply(ctx context.Context, id, hardwareType string) (catalog.Applicable, error)
	// RecordApply appends to the apply history.
	RecordApply(ctx context.Context, r store.ApplyRecord) error
	// Parse validates an inline manifest without storing it.
	Parse(configJSON string) (*manifest.Manifest, error)
	// Prepare makes the temporary cache of an inline apply, without
	// downloading anything: its jobs await their artifacts there.
	Prepare(m *manifest.Manifest, names []string, token hw.Secret) (*catalog.Staging, error)
}

// JobEngine is what the handlers ask of the job engine (*actors.Engine
// implements it). It is the one owner of which node is busy: handlers never
// decide that themselves.
type JobEngine interface {
	JobService
	// Create admits one job and starts wf.
	Create(ctx context.Context, spec messages.JobSpec, wf messages.Workflow, cleanup *messages.CleanupPlan) (messages.JobSnapshot, error)
	// CreateBatch admits a parent and one child per target.
	CreateBatch(ctx context.Context, parent messages.JobSpec, targets []messages.BatchTarget, cleanup *messages.CleanupPlan) (messages.CreateBatchReply, error)
	// Seal records a terminal outcome (a batch parent no child was
	// admitted to).
	Seal(ctx context.Context, id string, out messages.Outcome) (messages.JobSnapshot, error)
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
