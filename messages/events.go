package messages

import "time"

// Event is one state change of the job index. The registry expresses every
// change as a sequence of events applied by a single function, so the events
// can be journaled and replayed to rebuild the index.
type Event interface {
	// Subject returns the id of the job the event is about.
	Subject() string
}

// JobCreated records a new job. Parents and reservations are created
// Running, others Queued.
type JobCreated struct {
	ID          string
	ParentID    string
	Type        JobType
	RackID      string
	NodeID      string
	State       JobState
	Description string
	// Reservation marks a child that only holds its node for its parent:
	// it completes when the parent reaches a terminal state.
	Reservation bool
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

// NodeLocked records that Holder (a job id, or the id of an operation's
// lease) now holds (RackID, NodeID); an empty NodeID is the lease of the
// whole rack. Holds are exclusive.
type NodeLocked struct {
	RackID string
	NodeID string
	Holder string
	// Operation names an operation lease's purpose; empty for jobs.
	Operation string
	Since     time.Time
	// Expires is when an operation's lease lapses; zero for jobs, whose
	// holds end with their terminal state.
	Expires time.Time
}

// NodeReleased records that Holder no longer holds (RackID, NodeID).
type NodeReleased struct {
	RackID string
	NodeID string
	Holder string
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
func (e NodeLocked) Subject() string { return e.Holder }

// Subject implements Event.
func (e NodeReleased) Subject() string { return e.Holder }

// Subject implements Event.
func (e JobEvicted) Subject() string { return e.ID }

// Subject implements Event.
func (e ShutdownBegun) Subject() string { return "" }
