package messages

import "time"

// JobSnapshot is a point-in-time copy of one job record. Every field is a
// copy except ChildIDs, which shares the registry's append-only list (so
// reading a parent of 10,000 children costs no copy): treat it as read-only.
type JobSnapshot struct {
	ID           string    `json:"id"`
	ParentID     string    `json:"parent_id,omitempty"` // empty for top-level jobs
	ChildIDs     []string  `json:"child_ids,omitempty"` // in attach order; non-empty exactly for parents; read-only
	Type         JobType   `json:"type,omitempty"`
	State        JobState  `json:"state"`
	Description  string    `json:"description,omitempty"` // state_description on the wire
	RackID       string    `json:"rack_id,omitempty"`
	NodeID       string    `json:"node_id,omitempty"` // empty for batch parents
	ErrorCode    JobError  `json:"error_code,omitempty"`
	ErrorMessage string    `json:"error_message,omitempty"`
	ResultJSON   string    `json:"result_json,omitempty"` // empty unless the job is terminal
	CreatedAt    time.Time `json:"created_at,omitzero"`
	UpdatedAt    time.Time `json:"updated_at,omitzero"`
	// Quarantined is set while the job's workflow has not returned within
	// the quarantine bound after it was cancelled: its nodes stay held
	// until it returns or an operator releases them. It is never journaled:
	// after a restart no workflow runs.
	Quarantined bool `json:"-"`
}

// IsParent reports whether the job has children. A batch parent that has not
// admitted any child is not (yet) a parent.
func (s JobSnapshot) IsParent() bool { return len(s.ChildIDs) > 0 }

// IsTerminal reports whether the job is Completed or Failed.
func (s JobSnapshot) IsTerminal() bool { return s.State.IsTerminal() }

// JobSpec describes a job to create.
type JobSpec struct {
	// ID is optional; the engine assigns a random UUID when it is empty. A
	// create carrying the ID of an existing job is answered with that job
	// (creates are idempotent per ID, so they can be retried safely).
	ID string
	// ParentID attaches the new job to an existing, non-terminal top-level job.
	ParentID string
	Type     JobType
	RackID   string
	// NodeID is the node the job works on. While a non-terminal job holds
	// (RackID, NodeID), another job or lease for it is refused; empty never
	// conflicts.
	NodeID string
	// Devices are the canonical keys of the devices the job drives on its
	// node (hw.Node.DeviceKeys): a device held under another (rack, node)
	// refuses the job, so one device sent under two names is still held
	// once.
	Devices []string
	// Description is the initial state description ("Queued" when empty).
	Description string
}

// NodeRef names one node exactly as the caller spelled it.
type NodeRef struct {
	RackID string
	NodeID string
	// Devices are the node's canonical device keys (see JobSpec.Devices).
	Devices []string
	// PowerDomain asks for the node's rack's power domain with the node
	// (a power-shelf OFF or cycle): granted only while nothing else in the
	// rack is held, and it then refuses every other hold in the rack. An
	// AcquireLease grants it per node; a refused domain refuses the node.
	PowerDomain bool
}

// Reservation makes a job hold more than its own node, from its admission
// until its terminal state, all or nothing: the lease of its whole rack
// (HoldRack) and, as child records visible with include_child_job_states,
// every node in Nodes. The reservation children carry no workflow: they
// are Running while the job runs and complete in the same registry turn
// as the job's own terminal state, so a caller who sees the job terminal
// finds every node it held already free.
type Reservation struct {
	// HoldRack holds the rack's power domain (see NodeRef.PowerDomain):
	// refused while any node of the rack is held by another, and while it
	// is held no other job or lease is granted on any node of the rack.
	HoldRack bool
	Nodes    []NodeRef
	// Description is the children's description while they hold their node.
	Description string
}

// BatchTarget is one node of a batch request.
type BatchTarget struct {
	RackID string
	NodeID string
	// Devices are the node's canonical device keys (see JobSpec.Devices).
	Devices  []string
	Workflow Workflow
	// Description is the child's initial description ("Queued" when empty).
	Description string
}

// RejectedTarget is a batch target that was not admitted, with the reason.
type RejectedTarget struct {
	RackID  string
	NodeID  string
	Code    JobError
	Message string
	// Holder is the job holding the target, "" when none does.
	Holder string
}

// Outcome is the terminal result recorded for a job: Completed or Failed.
type Outcome struct {
	State       JobState // StateCompleted or StateFailed
	Description string
	Code        JobError // failed jobs only
	Message     string   // failed jobs only
	ResultJSON  string
}

// Completed builds a successful outcome.
func Completed(description, resultJSON string) Outcome {
	return Outcome{State: StateCompleted, Description: description, ResultJSON: resultJSON}
}

// Failed builds a failed outcome from a failure.
func Failed(f Failure) Outcome {
	desc := f.Description
	if desc == "" {
		desc = "Failed"
	}
	return Outcome{State: StateFailed, Description: desc, Code: f.Code, Message: f.Message, ResultJSON: f.ResultJSON}
}

// CleanupPlan asks the engine to remove Dir after the job's worker has
// exited and, when AfterJobs is set, once every listed job is terminal (a job
// that no longer exists counts as terminal) or Timeout has elapsed.
type CleanupPlan struct {
	Dir       string
	AfterJobs []string
	Timeout   time.Duration // 0 means wait without limit
}

// CleanupResult says what a cleanup plan did.
type CleanupResult int

// Cleanup results.
const (
	CleanupSkipped  CleanupResult = iota // no plan, or the wait timed out or was cancelled
	CleanupRemoved                       // the directory was removed
	CleanupNotFound                      // the directory was already gone
	CleanupFailed                        // removal failed; see CleanupReport.Err
	CleanupPanicked                      // the cleanup panicked; see CleanupReport.Err
)

// String returns the lowercase name of the result.
func (r CleanupResult) String() string {
	switch r {
	case CleanupRemoved:
		return "removed"
	case CleanupNotFound:
		return "not_found"
	case CleanupFailed:
		return "failed"
	case CleanupPanicked:
		return "panicked"
	default:
		return "skipped"
	}
}

// CleanupReport is the result of running a job's cleanup plan.
type CleanupReport struct {
	JobID  string
	Result CleanupResult
	Path   string
	Err    string // failure or panic text; empty otherwise
}
