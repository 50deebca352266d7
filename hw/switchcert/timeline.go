package switchcert

import (
	"encoding/json"
	"sync"
	"time"
)

// Stage and job status words of result_json.
const (
	statusQueued    = "queued"
	statusRunning   = "running"
	statusCompleted = "completed"
	statusFailed    = "failed"
	statusSkipped   = "skipped" // never reached, or not asked for
	statusCancelled = "cancelled"
	statusDisabled  = "already_disabled"
)

// stageRecord is one stage as result_json shows it.
type stageRecord struct {
	Name       string            `json:"name"`
	Status     string            `json:"status"`
	Message    string            `json:"message"`
	StartedAt  int64             `json:"started_at_ms,omitempty"`
	FinishedAt int64             `json:"finished_at_ms,omitempty"`
	DurationMS int64             `json:"duration_ms,omitempty"`
	Details    map[string]string `json:"details,omitempty"`
}

// timeline is the record of one job's stages.
type timeline struct {
	mu      sync.Mutex
	now     func() time.Time
	started time.Time
	current string
	stages  []stageRecord
}

func newTimeline(now func() time.Time, names []string) *timeline {
	t := &timeline{now: now, started: now()}
	for _, n := range names {
		t.stages = append(t.stages, stageRecord{Name: n, Status: statusQueued})
	}
	return t
}

func (t *timeline) begin(i int, message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current = t.stages[i].Name
	s := &t.stages[i]
	s.Status, s.Message, s.StartedAt = statusRunning, message, t.now().UnixMilli()
}

func (t *timeline) end(i int, status, message string, details map[string]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.stages[i]
	s.Status, s.Message, s.Details = status, message, details
	s.FinishedAt = t.now().UnixMilli()
	s.DurationMS = s.FinishedAt - s.StartedAt
}

// result renders result_json: the job's own fields, then the timeline,
// stages never reached marked skipped.
func (t *timeline) result(fields map[string]any) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for i := range t.stages {
		if t.stages[i].Status == statusQueued {
			t.stages[i].Status = statusSkipped
		}
	}
	doc := map[string]any{}
	for k, v := range fields {
		doc[k] = v
	}
	doc["timing_summary"] = map[string]any{"started_at_ms": t.started.UnixMilli(), "updated_at_ms": now.UnixMilli(),
		"total_duration_ms": now.Sub(t.started).Milliseconds(), "current_stage": t.current, "stages": t.stages}
	b, err := json.Marshal(doc)
	if err != nil { // unreachable: strings, numbers, bools and stages
		return `{"status":"unknown"}`
	}
	return string(b)
}

// skip marks stage i as not run, saying why.
func (t *timeline) skip(i int, message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stages[i].Status, t.stages[i].Message = statusSkipped, message
}
