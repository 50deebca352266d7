package messages

import "time"

// JobObservation is what the job engine tells its observer (the metrics)
// when a job is admitted and when it is sealed. It names no job, rack or
// node: an observer only aggregates.
type JobObservation struct {
	// Type is the job's workflow; an untyped batch child reports its
	// parent's.
	Type JobType
	// Leaf is true for a job that runs a workflow itself, false for a batch
	// parent that only aggregates its children.
	Leaf bool
	// State is StateQueued on admission, StateCompleted or StateFailed when
	// the job is sealed.
	State JobState
	// Code is the error code of a failed job, ErrorUnspecified otherwise.
	Code JobError
	// Duration is a sealed job's time from its creation to its seal (zero
	// on admission).
	Duration time.Duration
}

// JobChange is one item of the job engine's change feed (see
// actors.Engine.Subscribe): after a registry turn, a job as it now is, a
// job that left the index, or a hold taken or released. Exactly one of
// Job, Evicted and Hold is set.
type JobChange struct {
	// Job is the job's snapshot at the end of the turn that changed it.
	Job *JobSnapshot
	// Evicted is the id of a job that left the index (TTL or capacity).
	Evicted string
	// Hold is a node or rack lease taken or released.
	Hold *HoldChange
}

// HoldChange is a lease of a node (or, with an empty NodeID, of a rack's
// power domain) taken or released.
type HoldChange struct {
	RackID string
	NodeID string
	// Holder is the job or operation lease holding the node.
	Holder string
	// Job is the top-level job the hold belongs to: the holder itself, or
	// the parent of a reservation or batch child; empty for an operation.
	Job string
	// Operation names an operation's lease (e.g. "power"); empty for jobs.
	Operation string
	// Held is true when the hold was taken, false when released.
	Held bool
}

// Hold is one lease the registry keeps: a node (or, with an empty NodeID,
// a rack's power domain) and who holds it.
type Hold struct {
	RackID    string
	NodeID    string
	Holder    string
	Job       string
	Operation string
	Since     time.Time
}
