package messages

import "time"

// CreateJob admits one job and starts its workflow.
type CreateJob struct {
	Spec     JobSpec
	Workflow Workflow     // required
	Cleanup  *CleanupPlan // optional
	Reserve  *Reservation // optional: more nodes and the rack, all or nothing
}

// CreateJobReply answers CreateJob.
type CreateJobReply struct {
	Job JobSnapshot
	Err error // *RefusedError for admission refusals
	// Conflicts lists every node (or rack, with an empty NodeID) that made a
	// reservation refusal, with the holder named in Message.
	Conflicts []RejectedTarget
}

// CreateBatch admits a parent and one child per target in a single request.
// Every admitted child record exists before any child workflow starts.
type CreateBatch struct {
	Parent   JobSpec // NodeID must be empty
	Children []BatchTarget
	// Cleanup, optional, runs once the parent is sealed (every child is
	// terminal then): an ephemeral firmware cache removed after the batch
	// that used it. Its AfterJobs are not needed and ignored.
	Cleanup *CleanupPlan
}

// CreateBatchReply answers CreateBatch. Err is set only when the parent itself
// was refused; per-target refusals are listed in Rejected, in request order.
type CreateBatchReply struct {
	Parent   JobSnapshot
	Admitted []JobSnapshot
	Rejected []RejectedTarget
	Err      error
}

// GetJob reads one job and, when IncludeChildren is set, its children in
// attach order (children that no longer exist are skipped).
type GetJob struct {
	ID              string
	IncludeChildren bool
}

// GetJobReply answers GetJob; Jobs[0] is the requested job.
type GetJobReply struct {
	Jobs []JobSnapshot
	Err  error // ErrJobNotFound when unknown
}

// SealJob records a terminal outcome for a job that has no running workflow
// of its own (typically a batch parent that admitted no child).
type SealJob struct {
	ID      string
	Outcome Outcome
}

// SealJobReply answers SealJob.
type SealJobReply struct {
	Job JobSnapshot
	Err error // ErrJobNotFound or ErrJobTerminal
}

// CancelJob signals a job's workflow to stop, and a batch parent's every
// open child. It does not free the nodes: only the terminal state each
// workflow then records does.
type CancelJob struct {
	ID string
	// Cause is the workflows' context cause; nil means a plain cancel.
	Cause error
}

// CancelJobReply answers CancelJob.
type CancelJobReply struct {
	Signalled bool // false when no workflow was signalled
	Jobs      int  // how many workflows were signalled
	Terminal  bool // the job had already ended
	Err       error
}

// AwaitTerminal is answered once every listed job is terminal or gone. The
// registry keeps one subscription per WaiterID: sending the same request
// again (after a registry restart) does not add a second one.
type AwaitTerminal struct {
	WaiterID string
	IDs      []string
}

// AwaitTerminalReply answers AwaitTerminal.
type AwaitTerminalReply struct {
	Err error
}

// BeginShutdown makes the registry refuse every new job from now on and
// cancels the workflows of all non-terminal leaf jobs.
type BeginShutdown struct{}

// BeginShutdownReply answers BeginShutdown with the ids that were signalled.
type BeginShutdownReply struct {
	Signalled []string
	Err       error
}

// ReapExpired runs one reaper pass now: refresh every open parent, then evict
// expired terminal jobs.
type ReapExpired struct{}

// ReapExpiredReply answers ReapExpired.
type ReapExpiredReply struct {
	Evicted int
	Err     error
}

// AcquireLease asks for short holds on nodes and racks for a synchronous
// operation (a power change, a node deletion). A node or rack held by a job
// or by another lease is refused. Leases expire after TTL even if nobody
// releases them, so a caller that vanishes cannot hold a node for ever.
type AcquireLease struct {
	// ID names the lease; sending the same request again is answered with
	// the same grant (the facade retries requests lost to a restart).
	ID string
	// Operation says what holds the lease, for refusals and logs
	// ("SetPowerState").
	Operation string
	// Racks are held whole, as power domains: refused while anyone else
	// holds a node of the rack; once held, no other lease or job is granted
	// on the rack or any node of it.
	Racks []string
	// RacksFree must not be held by anyone, but are not held by this lease
	// (a node deletion must not happen during a rack-wide power operation,
	// yet two deletions in one rack do not exclude each other).
	RacksFree []string
	Nodes     []NodeRef
	// Partial grants the free nodes and refuses only the busy ones; without
	// it the lease is all or nothing. Racks are always all or nothing.
	Partial bool
	TTL     time.Duration
}

// AcquireLeaseReply answers AcquireLease. Refused is aligned with Nodes (nil
// where the node was granted). Err is set when nothing was granted because
// a rack, or (without Partial) any node, was busy; then Refused still names
// every busy node.
type AcquireLeaseReply struct {
	Refused []*RefusedError
	Err     error
}

// ReleaseLease gives a lease's holds back. Releasing an unknown or expired
// lease is not an error.
type ReleaseLease struct {
	ID string
}

// ReleaseLeaseReply answers ReleaseLease.
type ReleaseLeaseReply struct{}
