package messages

import "time"

// ListJobs reads the jobs the registry tracks (running ones and finished
// ones until their retention ends) that match every set condition, newest
// first: by creation time, then by id descending.
type ListJobs struct {
	// State keeps jobs in this state; StateUnspecified keeps all.
	State JobState
	// Type keeps jobs whose JobType.String() is this; "" keeps all.
	Type string
	// RackID keeps jobs on this rack; "" keeps all.
	RackID string
	// Since keeps jobs created at or after it; zero keeps all.
	Since time.Time
	// After continues a listing: only jobs after this cursor in the order.
	After JobCursor
	// TopLevel keeps only jobs without a parent (no batch or reservation
	// children).
	TopLevel bool
	// Limit caps the jobs answered; zero or less means no cap.
	Limit int
}

// JobCursor is a position in ListJobs's order: the last job of a page.
type JobCursor struct {
	CreatedAt time.Time
	ID        string
}

// IsZero reports whether c is no position (the listing's start).
func (c JobCursor) IsZero() bool { return c.ID == "" && c.CreatedAt.IsZero() }

// Before reports whether a job created at createdAt with id comes after c
// in ListJobs's order (newest first, then id descending).
func (c JobCursor) Before(createdAt time.Time, id string) bool {
	if !createdAt.Equal(c.CreatedAt) {
		return createdAt.Before(c.CreatedAt)
	}
	return id < c.ID
}

// ListJobsReply answers ListJobs. Next is the cursor of the next page, zero
// when there is none.
type ListJobsReply struct {
	Jobs []JobSnapshot
	Next JobCursor
	Err  error
}
