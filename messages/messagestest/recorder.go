// Package messagestest has what tests of workflows share: a job reporter
// that records what a workflow tells its job.
package messagestest

import (
	"sync"

	"github.com/rmsd/rmsd/messages"
)

// Recorder is a messages.Reporter that records a workflow's reports. Like
// the job engine's, the first terminal report stands: a later one returns
// messages.ErrJobTerminal, and Progress returns false once the job ended.
// Read its fields once the workflow has returned.
type Recorder struct {
	// JobID and Parent are what ID and ParentID answer ("job-1" and ""
	// when empty).
	JobID, Parent string

	mu sync.Mutex
	// Steps are the progress descriptions, in order.
	Steps []string
	// Done is set by the terminal report, Desc is its description, Result
	// a completion's result_json and Failure a failure.
	Done    bool
	Desc    string
	Result  string
	Failure *messages.Failure
}

var _ messages.Reporter = (*Recorder)(nil)

// ID implements messages.Reporter.
func (r *Recorder) ID() string {
	if r.JobID == "" {
		return "job-1"
	}
	return r.JobID
}

// ParentID implements messages.Reporter.
func (r *Recorder) ParentID() string { return r.Parent }

// Progress implements messages.Reporter.
func (r *Recorder) Progress(description string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Steps = append(r.Steps, description)
	return !r.Done
}

// Complete implements messages.Reporter.
func (r *Recorder) Complete(description, resultJSON string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Done {
		return messages.ErrJobTerminal
	}
	r.Done, r.Desc, r.Result = true, description, resultJSON
	return nil
}

// Fail implements messages.Reporter.
func (r *Recorder) Fail(f messages.Failure) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.Done {
		return messages.ErrJobTerminal
	}
	r.Done, r.Desc, r.Failure = true, f.Description, &f
	return nil
}
