package timeline

import (
	"sync"
	"time"
)

// Stage status words.
const (
	Queued    = "queued"
	Running   = "running"
	Completed = "completed"
	Failed    = "failed"
	// Skipped is a stage never reached (an earlier stage ended the run) or
	// not asked for.
	Skipped = "skipped"
)

// Stage is one stage as result_json shows it.
type Stage struct {
	Name string `json:"name"`
	// Step is the runbook step the stage implements, where it has one
	// (the cold reboot's "5-6").
	Step       string            `json:"step,omitempty"`
	Status     string            `json:"status"`
	Message    string            `json:"message"`
	StartedAt  int64             `json:"started_at_ms,omitempty"`
	FinishedAt int64             `json:"finished_at_ms,omitempty"`
	DurationMS int64             `json:"duration_ms,omitempty"`
	Details    map[string]string `json:"details,omitempty"`
}

// Timeline is the record of one run's stages.
type Timeline struct {
	mu      sync.Mutex
	now     func() time.Time
	started time.Time
	current string
	stages  []Stage
}

// New starts a timeline at now() with stages (their Name and Step), all
// queued.
func New(now func() time.Time, stages []Stage) *Timeline {
	t := &Timeline{now: now, started: now(), stages: make([]Stage, len(stages))}
	for i, s := range stages {
		t.stages[i] = Stage{Name: s.Name, Step: s.Step, Status: Queued}
	}
	return t
}

// Named lists stages by name only.
func Named(names ...string) []Stage {
	out := make([]Stage, len(names))
	for i, n := range names {
		out[i] = Stage{Name: n}
	}
	return out
}

// Begin marks stage i running, now.
func (t *Timeline) Begin(i int, message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current = t.stages[i].Name
	s := &t.stages[i]
	s.Status, s.Message, s.StartedAt = Running, message, t.now().UnixMilli()
}

// End records stage i's outcome, now.
func (t *Timeline) End(i int, status, message string, details map[string]string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := &t.stages[i]
	s.Status, s.Message, s.Details = status, message, details
	s.FinishedAt = t.now().UnixMilli()
	s.DurationMS = s.FinishedAt - s.StartedAt
}

// Skip marks stage i as not run, saying why.
func (t *Timeline) Skip(i int, message string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stages[i].Status, t.stages[i].Message = Skipped, message
}

// Summary is the timing part of result_json. A workflow embeds it after
// its own fields.
type Summary struct {
	StartedAt       int64   `json:"started_at_ms"`
	UpdatedAt       int64   `json:"updated_at_ms"`
	TotalDurationMS int64   `json:"total_duration_ms"`
	CurrentStage    string  `json:"current_stage"`
	Stages          []Stage `json:"stages"`
}

// Close marks the stages never reached skipped and returns the summary as
// of now (a copy: the timeline may go on being written).
func (t *Timeline) Close() Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for i := range t.stages {
		if t.stages[i].Status == Queued {
			t.stages[i].Status = Skipped
		}
	}
	return Summary{StartedAt: t.started.UnixMilli(), UpdatedAt: now.UnixMilli(), TotalDurationMS: now.Sub(t.started).Milliseconds(),
		CurrentStage: t.current, Stages: append([]Stage(nil), t.stages...)}
}
