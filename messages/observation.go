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
