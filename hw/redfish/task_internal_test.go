package redfish

import "testing"

func TestNormaliseTask(t *testing.T) {
	tests := []struct {
		name        string
		give        taskResource
		wantState   TaskState
		wantHandoff bool
	}{
		{"running", taskResource{TaskState: "Running", TaskStatus: "OK", PercentComplete: 40}, TaskRunning, false},
		{"new is pending", taskResource{TaskState: "New"}, TaskPending, false},
		{"completed", taskResource{TaskState: "Completed", TaskStatus: "OK"}, TaskCompleted, false},
		{"exception", taskResource{TaskState: "Exception", TaskStatus: "Critical"}, TaskFailed, false},
		{"critical status fails a completed task", taskResource{TaskState: "Completed", TaskStatus: "Critical"}, TaskFailed, false},
		{"warning with errors fails", taskResource{TaskState: "Completed", TaskStatus: "Warning",
			Messages: []taskMessage{{Message: "Task completed with errors", Severity: "Warning"}}}, TaskFailed, false},
		{"plain warning completes", taskResource{TaskState: "Completed", TaskStatus: "Warning",
			Messages: []taskMessage{{Message: "Component reports a minor issue", Severity: "Warning"}}}, TaskCompleted, false},
		{"cancelled", taskResource{TaskState: "Cancelled", TaskStatus: "OK"}, TaskCancelled, false},
		{"shelf aborted hand-off", taskResource{TaskState: "Cancelled", TaskStatus: "Warning", PercentComplete: 100,
			Messages: []taskMessage{{MessageID: "TaskEvent.1.0.TaskAborted", Severity: "Warning"}}}, TaskCancelled, true},
		{"shelf internal-error hand-off", taskResource{TaskState: "Running", TaskStatus: "OK", EndTime: "2026-01-01T00:00:00Z",
			Messages: []taskMessage{{MessageID: "Base.1.0.InternalError", Severity: "Critical"}}}, TaskRunning, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := normaliseTask("7", tt.give)
			if got.State != tt.wantState || got.ResetHandoff != tt.wantHandoff || got.ID != "7" {
				t.Fatalf("got %+v, want state %v handoff %v", got, tt.wantState, tt.wantHandoff)
			}
		})
	}
}

func TestTaskIDFrom(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		location string
		want     string
	}{
		{"id", `{"Id":"12"}`, "", "12"},
		{"odata id", `{"@odata.id":"/redfish/v1/TaskService/Tasks/3"}`, "", "3"},
		{"odata id elsewhere", `{"@odata.id":"/redfish/v1/UpdateService"}`, "", ""},
		{"message arg", `{"Messages":[{"MessageArgs":["/redfish/v1/TaskService/Tasks/9"]}]}`, "", "9"},
		{"location", `not json`, "/redfish/v1/TaskService/TaskMonitors/abc", "abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := taskIDFrom([]byte(tt.body), tt.location); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
