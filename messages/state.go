package messages

// JobState is the lifecycle state of a job. The numeric values match the wire
// enums JobExecutionState and FirmwareJobState of rack_manager.proto.
type JobState int32

// Job states. A job moves Queued → Running → Completed | Failed; Queued may
// go straight to Completed or Failed. Completed and Failed are terminal and
// never overwritten.
const (
	StateUnspecified JobState = 0
	StateQueued      JobState = 1
	StateRunning     JobState = 2
	StateCompleted   JobState = 3
	StateFailed      JobState = 4
)

// String returns the lowercase wire form used by the switch status RPCs:
// "queued", "running", "completed" or "failed" ("unspecified" otherwise).
func (s JobState) String() string {
	switch s {
	case StateQueued:
		return "queued"
	case StateRunning:
		return "running"
	case StateCompleted:
		return "completed"
	case StateFailed:
		return "failed"
	default:
		return "unspecified"
	}
}

// IsTerminal reports whether s is Completed or Failed.
func (s JobState) IsTerminal() bool {
	return s == StateCompleted || s == StateFailed
}
