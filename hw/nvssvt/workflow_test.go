package nvssvt_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvssvt"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/messages/messagestest"
)

func plan() nvssvt.Plan {
	return nvssvt.Plan{Node: hw.Node{ID: "n1", RackID: "r1", Type: hw.ComputeGB200Nvidia,
		BMC: &hw.Endpoint{IP: "127.0.0.1", Port: 1, Credentials: hw.UserPass("admin", secret)}}}
}

func TestWorkflowCompletesWithTheParsedReport(t *testing.T) {
	job := &messagestest.Recorder{}
	plan().Workflow(helperRunner(t, modePass, nil)).Run(context.Background(), job)
	if job.Failure != nil {
		t.Fatalf("failed: %+v", job.Failure)
	}
	var doc struct {
		Status, Validation string
		LogDir             string `json:"log_dir"`
		RackID             string `json:"rack_id"`
		Summary            nvssvt.Summary
		DUTs               []nvssvt.DUT
	}
	if err := json.Unmarshal([]byte(job.Result), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Status != "completed" || doc.Validation != "PASS" || doc.Summary.Passed != 2 || len(doc.DUTs) != 1 ||
		!strings.HasSuffix(doc.LogDir, "/job-1") || doc.RackID != "r1" {
		t.Errorf("result_json %s", job.Result)
	}
	if want := []string{"NVSSVT scan starting", "NVSSVT scan running"}; strings.Join(job.Steps, "|") != strings.Join(want, "|") {
		t.Errorf("progress %q, want %q", job.Steps, want)
	}
	if job.Desc != "System validation passed: 2 of 2 checks passed" {
		t.Errorf("description %q", job.Desc)
	}
}

func TestWorkflowFailsNamingFailedChecksOrTheMissingReport(t *testing.T) {
	for _, tc := range []struct {
		mode    string
		code    messages.JobError
		message string
		report  bool
	}{
		{modeFailChecks, messages.ErrorOther, "System validation of n1: FAIL, 1 of 2 checks failed: fans: fan 3 stopped", true},
		{modeGarbled, messages.ErrorInvalidResponse, "System validation of n1 did not run to a report: nvssvt report: not a JSON object", false},
		{modeLeakSecret, messages.ErrorOther, "exit status 3: login failed for password [REDACTED]", false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			job := &messagestest.Recorder{}
			plan().Workflow(helperRunner(t, tc.mode, nil)).Run(context.Background(), job)
			f := job.Failure
			if f == nil || f.Code != tc.code || !strings.Contains(f.Message, tc.message) {
				t.Fatalf("failure %+v", f)
			}
			if strings.Contains(f.Message+f.ResultJSON, secret) {
				t.Errorf("the password is in the failure")
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(f.ResultJSON), &doc); err != nil {
				t.Fatal(err)
			}
			if doc["status"] != "failed" || doc["error_message"] != f.Message || doc["log_dir"] == nil || (doc["duts"] != nil) != tc.report {
				t.Errorf("result_json %s", f.ResultJSON)
			}
		})
	}
}
