package messages

import "context"

// Workflow is the work a job runs. Run is called once, in a goroutine the
// engine owns; ctx is cancelled when the job is cancelled, shutdown begins
// (cause ErrShuttingDown; see ShieldFromShutdown) or the job's actor stops. Run must record exactly one terminal state
// through job (Complete or Fail) before it returns; returning or panicking
// without one seals the job Failed with code Internal.
type Workflow interface {
	Run(ctx context.Context, job Reporter)
}

// WorkflowFunc adapts a function to Workflow.
type WorkflowFunc func(ctx context.Context, job Reporter)

// Run calls f.
func (f WorkflowFunc) Run(ctx context.Context, job Reporter) { f(ctx, job) }

// Reporter is a running job's view of itself. It is safe for concurrent use.
// A terminal state it records becomes visible, and the job's nodes free,
// once the workflow has returned: nothing may still work on them then.
type Reporter interface {
	// ID returns the job id.
	ID() string
	// ParentID returns the parent job id, or "".
	ParentID() string
	// Progress sets the description and moves the job to Running. It returns
	// false once a terminal state has been recorded.
	Progress(description string) bool
	// Complete records Completed. It returns ErrJobTerminal if a terminal
	// state was already recorded (the first one stands).
	Complete(description, resultJSON string) error
	// Fail records Failed. It returns ErrJobTerminal if a terminal state was
	// already recorded (the first one stands).
	Fail(f Failure) error
}
