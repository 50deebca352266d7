package switchimage

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
	statusSkipped   = "skipped" // never reached: an earlier stage ended the update
	statusCancelled = "cancelled"
	statusUpToDate  = "already_up_to_date"
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

// timeline is the record of one update's stages.
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

// summary is what result_json says about the update besides its stages.
type summary struct {
	Status            string `json:"status"`
	RackID            string `json:"rack_id"`
	NodeID            string `json:"node_id"`
	ImageFile         string `json:"image_filename"`
	TargetBuild       string `json:"target_build"`
	CurrentBuild      string `json:"current_build,omitempty"`
	NextBuild         string `json:"next_build,omitempty"`
	AllowONIERecovery bool   `json:"allow_onie_recovery"`
	// ONIERecovery says what became of allow_onie_recovery: rmsd has no
	// ONIE path, so it is always "not supported".
	ONIERecovery string `json:"onie_recovery"`
	ErrorMessage string `json:"error_message,omitempty"`
}

// result renders result_json: the summary, then the timeline, stages never
// reached marked skipped.
func (t *timeline) result(s summary) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for i := range t.stages {
		if t.stages[i].Status == statusQueued {
			t.stages[i].Status = statusSkipped
		}
	}
	doc := struct {
		summary
		StartedAt       int64         `json:"started_at_ms"`
		UpdatedAt       int64         `json:"updated_at_ms"`
		TotalDurationMS int64         `json:"total_duration_ms"`
		CurrentStage    string        `json:"current_stage"`
		Stages          []stageRecord `json:"stages"`
	}{s, t.started.UnixMilli(), now.UnixMilli(), now.Sub(t.started).Milliseconds(), t.current, t.stages}
	b, err := json.Marshal(doc)
	if err != nil { // unreachable: strings, numbers and bools
		return `{"status":"` + s.Status + `"}`
	}
	return string(b)
}
