// Package messages is the public protocol of the job engine: the value types
// (JobState, JobError, JobType, JobSnapshot, JobSpec, Failure), the commands a
// caller sends to the job registry and the replies it gets back, the events
// that describe every state change of the job index, and the engine's sentinel
// errors.
//
// Naming follows the actor conventions used across rmsd: commands are
// imperative (CreateJob, GetJob), events are in the past tense (JobCreated,
// JobFailed) and every reply carries an Err field. Everything here is a plain
// value: no actor, goroutine or I/O lives in this package, so the gRPC edge,
// the hardware workflows and a future event journal can all depend on it.
package messages
