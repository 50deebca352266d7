package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TaskState is a normalised Redfish TaskState.
type TaskState int

// Normalised task states.
const (
	TaskUnknown TaskState = iota
	TaskPending
	TaskRunning
	TaskCompleted
	TaskFailed
	TaskCancelled
)

// String returns the lower-case state name.
func (s TaskState) String() string {
	switch s {
	case TaskPending:
		return "pending"
	case TaskRunning:
		return "running"
	case TaskCompleted:
		return "completed"
	case TaskFailed:
		return "failed"
	case TaskCancelled:
		return "cancelled"
	default:
		return "unknown"
	}
}

// TasksPath is the task collection.
const TasksPath = "/redfish/v1/TaskService/Tasks"

// Task is a firmware task as RMS sees it.
type Task struct {
	ID       string
	State    TaskState
	RawState string // TaskState as sent
	Status   string // TaskStatus as sent
	Percent  int
	// Message is the first non-OK message (with its resolution), else the
	// last message, else the TaskStatus.
	Message   string
	StartTime string
	EndTime   string
	// ResetHandoff is set for the power-shelf shapes meaning "staged, a
	// manager reset activates it"; such tasks count as completed.
	ResetHandoff bool
}

// Terminal reports whether the task will not change any more.
func (t Task) Terminal() bool {
	return t.State == TaskCompleted || t.State == TaskFailed || t.State == TaskCancelled
}

type taskMessage struct {
	MessageID  string   `json:"MessageId"`
	Message    string   `json:"Message"`
	Severity   string   `json:"Severity"`
	Resolution string   `json:"Resolution"`
	Args       []string `json:"MessageArgs"`
}

type taskResource struct {
	ID              string        `json:"Id"`
	TaskState       string        `json:"TaskState"`
	TaskStatus      string        `json:"TaskStatus"`
	PercentComplete flexInt       `json:"PercentComplete"`
	StartTime       string        `json:"StartTime"`
	EndTime         string        `json:"EndTime"`
	Messages        []taskMessage `json:"Messages"`
}

var warningFailureHints = []string{"resourceerrorsdetected", "detected errors", "completed with errors",
	"firmware update had errors", "no matching devices"}

// normaliseTask applies upstream's state mapping and failure rules.
func normaliseTask(id string, r taskResource) Task {
	t := Task{ID: id, RawState: r.TaskState, Status: r.TaskStatus, Percent: int(r.PercentComplete),
		StartTime: r.StartTime, EndTime: r.EndTime}
	if r.ID != "" {
		t.ID = r.ID
	}
	switch strings.ToLower(r.TaskState) {
	case "pending", "new", "starting":
		t.State = TaskPending
	case "running", "start", "inprogress", "in_progress", "service", "stopping", "suspended", "interrupted":
		t.State = TaskRunning
	case "completed", "complete", "ok":
		t.State = TaskCompleted
	case "exception", "failed", "error", "critical", "killed":
		t.State = TaskFailed
	case "cancelled", "canceled", "cancelling":
		t.State = TaskCancelled
	}
	ids := ""
	for _, m := range r.Messages {
		ids += " " + strings.ToLower(m.MessageID)
		if t.Message == "" && m.Severity != "" && !strings.EqualFold(m.Severity, "OK") {
			t.Message = strings.TrimSpace(m.Message + " " + m.Resolution)
		}
	}
	if t.Message == "" && len(r.Messages) > 0 {
		t.Message = r.Messages[len(r.Messages)-1].Message
	}
	if t.Message == "" {
		t.Message = r.TaskStatus
	}
	low := strings.ToLower(t.Message)
	status := strings.ToLower(r.TaskStatus)
	// Power-shelf "reached reset hand-off" shapes (counted as completed).
	if t.State == TaskCancelled && status == "warning" && t.Percent >= 100 &&
		(strings.Contains(ids, "taskaborted") || strings.Contains(low, "completed with errors")) {
		t.ResetHandoff = true
	}
	if t.State == TaskRunning && status == "ok" && t.Percent == 0 && r.EndTime != "" &&
		(strings.Contains(ids, "internalerror") || strings.Contains(low, "internal service error")) {
		t.ResetHandoff = true
	}
	if t.ResetHandoff {
		return t
	}
	if t.State != TaskFailed && t.State != TaskCancelled {
		switch {
		case status == "critical" || status == "failed" || status == "cancelled":
			t.State = TaskFailed
		case status == "warning" && containsAny(low+ids, warningFailureHints):
			t.State = TaskFailed
		}
	}
	return t
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// Task reads /redfish/v1/TaskService/Tasks/<id>.
func (c *Client) Task(ctx context.Context, id string) (Task, error) {
	var r taskResource
	if err := c.get(ctx, TasksPath+"/"+id, &r); err != nil {
		return Task{}, fmt.Errorf("read task %s: %w", id, err)
	}
	return normaliseTask(id, r), nil
}

// WaitTask polls the task every TaskPollInterval until it is terminal, for
// at most TaskTimeout. Failed reads are tolerated for TaskReadTolerance.
// progress, when not nil, sees every successful read. A task that ends
// failed or cancelled returns a *TaskError (errors.Is ErrTaskFailed); a
// power-shelf reset hand-off counts as completed.
func (c *Client) WaitTask(ctx context.Context, id string, progress func(Task)) (Task, error) {
	o := c.pool.opts
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, o.TaskTimeout)
	defer cancel()
	var failingSince time.Time
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return Task{}, waitEnded("wait task "+id, parent, ctx)
		case <-timer.C:
		}
		t, err := c.Task(ctx, id)
		switch {
		case err != nil && ctx.Err() != nil:
			return Task{}, waitEnded("wait task "+id, parent, ctx)
		case err != nil:
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(failingSince) >= o.TaskReadTolerance || errors.Is(err, ErrUnauthenticated) {
				return Task{}, fmt.Errorf("wait task: %w", err)
			}
		default:
			failingSince = time.Time{}
			if progress != nil {
				progress(t)
			}
			if t.ResetHandoff {
				t.State = TaskCompleted
				return t, nil
			}
			if t.State == TaskFailed || t.State == TaskCancelled {
				return t, &TaskError{Task: t}
			}
			if t.State == TaskCompleted {
				return t, nil
			}
		}
		timer.Reset(o.TaskPollInterval)
	}
}

// taskIDFrom extracts a task id from an upload answer: a non-empty Id, an
// @odata.id under Tasks, a message argument naming .../Tasks/<id>, or the
// Location header (Tasks or TaskMonitors).
func taskIDFrom(body []byte, location string) string {
	var r struct {
		ID       string        `json:"Id"`
		ODataID  string        `json:"@odata.id"`
		Messages []taskMessage `json:"Messages"`
	}
	_ = json.Unmarshal(body, &r) // a non-JSON body simply yields no id
	if r.ID != "" {
		return r.ID
	}
	if id := underTasks(r.ODataID); id != "" {
		return id
	}
	for _, m := range r.Messages {
		for _, a := range m.Args {
			if id := underTasks(a); id != "" {
				return id
			}
		}
	}
	if id := underTasks(location); id != "" {
		return id
	}
	return ""
}

// underTasks returns <id> from ".../Tasks/<id>" or ".../TaskMonitors/<id>".
func underTasks(uri string) string {
	parts := strings.Split(strings.Trim(uri, "/"), "/")
	if len(parts) < 2 {
		return ""
	}
	parent := parts[len(parts)-2]
	if parent == "Tasks" || parent == "TaskMonitors" {
		return parts[len(parts)-1]
	}
	return ""
}

// flexInt decodes a JSON number or numeric string; null or "" is 0.
type flexInt int

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(strings.TrimSpace(string(b)), `"`)
	if s == "" || s == "null" {
		*f = 0
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not an integer: %s", s)
	}
	*f = flexInt(n)
	return nil
}
