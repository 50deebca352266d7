package messages

import "time"

// Event is one state change of the job index. The registry expresses every
// change as a sequence of events applied by a single function, so the events
// can be journaled and replayed to rebuild the index. The json tags are the
// journal's encoding: renaming a field needs a new journal version.
type Event interface {
	// Subject returns the id of the job the event is about.
	Subject() string
}

// JobCreated records a new job. Parents and reservations are created
// Running, others Queued.
type JobCreated struct {
	ID          string   `json:"id,omitempty"`
	ParentID    string   `json:"parent_id,omitempty"`
	Type        JobType  `json:"type,omitempty"`
	RackID      string   `json:"rack_id,omitempty"`
	NodeID      string   `json:"node_id,omitempty"`
	State       JobState `json:"state,omitempty"`
	Description string   `json:"description,omitempty"`
	// Reservation marks a child that only holds its node for its parent:
	// it completes when the parent reaches a terminal state.
	Reservation bool      `json:"reservation,omitempty"`
	At          time.Time `json:"at,omitzero"`
}

// ChildAttached records that ChildID became a child of ParentID.
type ChildAttached struct {
	ParentID string    `json:"parent_id,omitempty"`
	ChildID  string    `json:"child_id,omitempty"`
	At       time.Time `json:"at,omitzero"`
}

// JobStarted records the first progress report (Queued → Running).
type JobStarted struct {
	ID          string    `json:"id,omitempty"`
	Description string    `json:"description,omitempty"`
	At          time.Time `json:"at,omitzero"`
}

// JobProgressed records a later progress report (Running → Running).
type JobProgressed struct {
	ID          string    `json:"id,omitempty"`
	Description string    `json:"description,omitempty"`
	At          time.Time `json:"at,omitzero"`
}

// JobCompleted records the terminal Completed state.
type JobCompleted struct {
	ID          string    `json:"id,omitempty"`
	Description string    `json:"description,omitempty"`
	ResultJSON  string    `json:"result_json,omitempty"`
	At          time.Time `json:"at,omitzero"`
}

// JobFailed records the terminal Failed state.
type JobFailed struct {
	ID          string    `json:"id,omitempty"`
	Code        JobError  `json:"code,omitempty"`
	Description string    `json:"description,omitempty"`
	Message     string    `json:"message,omitempty"`
	ResultJSON  string    `json:"result_json,omitempty"`
	At          time.Time `json:"at,omitzero"`
}

// NodeLocked records that Holder (a job id, or the id of an operation's
// lease) now holds (RackID, NodeID); an empty NodeID is the lease of the
// whole rack. Holds are exclusive.
type NodeLocked struct {
	RackID string `json:"rack_id,omitempty"`
	NodeID string `json:"node_id,omitempty"`
	Holder string `json:"holder,omitempty"`
	// Operation names an operation lease's purpose; empty for jobs.
	Operation string    `json:"operation,omitempty"`
	Since     time.Time `json:"since,omitzero"`
	// Expires is when an operation's lease lapses; zero for jobs, whose
	// holds end with their terminal state.
	Expires time.Time `json:"expires,omitzero"`
	// Devices are the canonical device keys held with the node: nobody
	// else may hold a node naming one of them.
	Devices []string `json:"devices,omitempty"`
}

// NodeReleased records that Holder no longer holds (RackID, NodeID).
type NodeReleased struct {
	RackID string `json:"rack_id,omitempty"`
	NodeID string `json:"node_id,omitempty"`
	Holder string `json:"holder,omitempty"`
}

// JobEvicted records that a job left the index (TTL or capacity pruning).
type JobEvicted struct {
	ID string `json:"id,omitempty"`
}

// ShutdownBegun records that the registry refuses new jobs from now on.
type ShutdownBegun struct {
	At time.Time `json:"at,omitzero"`
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

// JobRestored puts back one job as a journal snapshot recorded it, with its
// place among its parent's children and, for a parent, its children's
// counts. A snapshot restores every job before any hold.
type JobRestored struct {
	Job         JobSnapshot `json:"job"`
	Reservation bool        `json:"reservation,omitempty"`
	// Index is the job's position among its parent's children.
	Index int `json:"index,omitempty"`
	// Counts are a parent's children by state (reservations aside).
	Counts ChildCounts `json:"counts,omitzero"`
}

// ChildCounts tally a parent's children by state; Missing counts children
// already evicted.
type ChildCounts struct {
	Queued    int `json:"queued,omitempty"`
	Running   int `json:"running,omitempty"`
	Completed int `json:"completed,omitempty"`
	Failed    int `json:"failed,omitempty"`
	Missing   int `json:"missing,omitempty"`
}

// Subject implements Event.
func (e JobRestored) Subject() string { return e.Job.ID }
