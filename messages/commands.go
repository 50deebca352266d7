package messages

// CreateJob admits one job and starts its workflow.
type CreateJob struct {
	Spec     JobSpec
	Workflow Workflow     // required for leaf jobs
	Cleanup  *CleanupPlan // optional
}

// CreateJobReply answers CreateJob.
type CreateJobReply struct {
	Job JobSnapshot
	Err error // *RefusedError for admission refusals
}

// CreateBatch admits a parent and one child per target in a single request.
// Every admitted child record exists before any child workflow starts.
type CreateBatch struct {
	Parent   JobSpec // NodeID must be empty
	Children []BatchTarget
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

// CancelJob signals a job's workflow to stop. It does not free the node: only
// the terminal state the workflow then records does.
type CancelJob struct {
	ID string
}

// CancelJobReply answers CancelJob.
type CancelJobReply struct {
	Signalled bool // false when the job is terminal or has no workflow
	Err       error
}

// AwaitTerminal is answered once every listed job is terminal or gone.
type AwaitTerminal struct {
	IDs []string
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
