package messages

import "errors"

// Sentinel errors of the job engine. Refusals are reported as *RefusedError,
// which unwraps to one of the Err* admission sentinels.
var (
	ErrJobNotFound        = errors.New("jobs: job not found")
	ErrJobTerminal        = errors.New("jobs: job is already terminal")
	ErrDuplicateJob       = errors.New("jobs: job id already exists")
	ErrShuttingDown       = errors.New("jobs: shutting down")
	ErrNodeBusy           = errors.New("jobs: node busy")
	ErrAtCapacity         = errors.New("jobs: tracker at capacity")
	ErrParentUnavailable  = errors.New("jobs: parent unavailable")
	ErrDuplicateTarget    = errors.New("jobs: duplicate batch target")
	ErrInvalidSpec        = errors.New("jobs: invalid job spec")
	ErrEngineClosed       = errors.New("jobs: engine closed")
	ErrRegistryNotReached = errors.New("jobs: registry did not answer")
	// ErrRegistryCrashed answers a request whose handling crashed the job
	// registry: it is not retried (that would crash it again).
	ErrRegistryCrashed = errors.New("jobs: job registry failed on this request")
	// ErrRackBusy refuses a rack lease while another job or lease holds the
	// rack.
	ErrRackBusy = errors.New("jobs: rack busy")
	// ErrInterrupted is the cause a drain gives workflows it stops at its
	// deadline, after recording them as interrupted.
	ErrInterrupted = errors.New("jobs: interrupted by shutdown")
	// ErrStoreUnavailable refuses a new job while the job journal cannot
	// be written: a job id handed out then would not survive a restart.
	ErrStoreUnavailable = errors.New("jobs: job store unavailable")
	// ErrNotOwner refuses a job, in cluster mode, on an engine whose
	// member no longer owns the rack (actors.Engine.Abandon): the rack's
	// new owner admits it.
	ErrNotOwner = errors.New("jobs: this member no longer owns the rack")
)

// RefusedError is an admission refusal. Error returns the exact message
// clients see (e.g. "job already in progress for rack r node n (job_id x)").
type RefusedError struct {
	Reason  error // one of the admission sentinels
	Code    JobError
	Message string
	// Holder is the job that holds the node or rack refused, "" when
	// none does (a synchronous operation's lease, or another reason).
	Holder string
}

// Error returns the client-visible refusal message.
func (e *RefusedError) Error() string { return e.Message }

// Unwrap returns the admission sentinel.
func (e *RefusedError) Unwrap() error { return e.Reason }

// ResultJSON returns the default failure document for the refusal.
func (e *RefusedError) ResultJSON() string { return FailureJSON(e.Code, e.Message) }
