package coldreboot

import (
	"encoding/json"
	"sync"
	"time"
)

// Stage status values in the timeline.
const (
	stageQueued    = "queued"
	stageRunning   = "running"
	stageCompleted = "completed"
	stageFailed    = "failed"
	stageSkipped   = "skipped" // never reached: an earlier stage ended the run
)

// stageRecord is one stage of the timeline, as result_json shows it.
type stageRecord struct {
	Name       string            `json:"name"`
	Step       string            `json:"step"`
	Status     string            `json:"status"`
	Message    string            `json:"message"`
	StartedAt  int64             `json:"started_at_ms,omitempty"`
	FinishedAt int64             `json:"finished_at_ms,omitempty"`
	DurationMS int64             `json:"duration_ms,omitempty"`
	Details    map[string]string `json:"details,omitempty"`
}

// timeline records the stages of one run.
type timeline struct {
	mu      sync.Mutex
	now     func() time.Time
	started time.Time
	current string
	stages  []stageRecord
}

func newTimeline(now func() time.Time, stages []stage) *timeline {
	t := &timeline{now: now, started: now()}
	for _, s := range stages {
		t.stages = append(t.stages, stageRecord{Name: s.name, Step: s.step, Status: stageQueued})
	}
	return t
}

func (t *timeline) begin(i int, message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current = t.stages[i].Name
	t.stages[i].Status, t.stages[i].Message, t.stages[i].StartedAt = stageRunning, message, t.now().UnixMilli()
}

func (t *timeline) end(i int, status, message string, details map[string]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.stages[i]
	s.Status, s.Message, s.Details = status, message, details
	s.FinishedAt = t.now().UnixMilli()
	s.DurationMS = s.FinishedAt - s.StartedAt
}

// result renders the result_json document of a finished run.
func (t *timeline) result(rackID, status, errorMessage string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for i := range t.stages {
		if t.stages[i].Status == stageQueued {
			t.stages[i].Status = stageSkipped
		}
	}
	doc := struct {
		Status          string        `json:"status"`
		RackID          string        `json:"rack_id"`
		ErrorMessage    string        `json:"error_message,omitempty"`
		StartedAt       int64         `json:"started_at_ms"`
		UpdatedAt       int64         `json:"updated_at_ms"`
		TotalDurationMS int64         `json:"total_duration_ms"`
		CurrentStage    string        `json:"current_stage"`
		Stages          []stageRecord `json:"stages"`
	}{status, rackID, errorMessage, t.started.UnixMilli(), now.UnixMilli(), now.Sub(t.started).Milliseconds(), t.current, t.stages}
	b, err := json.Marshal(doc)
	if err != nil { // unreachable: plain strings and numbers
		return `{"status":"` + status + `"}`
	}
	return string(b)
}
