package messages

import "time"

// Event is one state change of the job index. The registry expresses every
// change as a sequence of events applied by a single function, so the events
// can be journaled and replayed to rebuild the index.
type Event interface {
	// Subject returns the id of the job the event is about.
	Subject() string
}

// JobCreated records a new job. Parents are created Running, others Queued.
type JobCreated struct {
	ID          string
	ParentID    string
	Type        JobType
	RackID      string
	NodeID      string
	State       JobState
	Description string
	At          time.Time
}

// ChildAttached records that ChildID became a child of ParentID.
type ChildAttached struct {
	ParentID string
	ChildID  string
	At       time.Time
}

// JobStarted records the first progress report (Queued → Running).
type JobStarted struct {
	ID          string
	Description string
	At          time.Time
}

// JobProgressed records a later progress report (Running → Running).
type JobProgressed struct {
	ID          string
	Description string
	At          time.Time
}

// JobCompleted records the terminal Completed state.
type JobCompleted struct {
	ID          string
	Description string
	ResultJSON  string
	At          time.Time
}

// JobFailed records the terminal Failed state.
type JobFailed struct {
	ID          string
	Code        JobError
	Description string
	Message     string
	ResultJSON  string
	At          time.Time
}

// NodeLocked records that JobID now holds (RackID, NodeID).
type NodeLocked struct {
	RackID string
	NodeID string
	JobID  string
}

// NodeReleased records that JobID no longer holds (RackID, NodeID).
type NodeReleased struct {
	RackID string
	NodeID string
	JobID  string
}

// JobEvicted records that a job left the index (TTL or capacity pruning).
type JobEvicted struct {
	ID string
}

// ShutdownBegun records that the registry refuses new jobs from now on.
type ShutdownBegun struct {
	At time.Time
}

// Subject implements Event.
func (e JobCreated) Subject() string { return e.ID }

// Subject implements Event.
func (e ChildAttached) Subject() string { return e.ChildID }

// Subject implements Event.
func (e JobStarted) Subject() string { return e.ID }

// Subject implements Event.
func (e JobProgressed) Subject() string { return e.ID }

// Subject implements Event.
func (e JobCompleted) Subject() string { return e.ID }

// Subject implements Event.
func (e JobFailed) Subject() string { return e.ID }

// Subject implements Event.
func (e NodeLocked) Subject() string { return e.JobID }

// Subject implements Event.
func (e NodeReleased) Subject() string { return e.JobID }

// Subject implements Event.
func (e JobEvicted) Subject() string { return e.ID }

// Subject implements Event.
func (e ShutdownBegun) Subject() string { return "" }
