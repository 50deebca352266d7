package actors

import (
	"testing"

	"github.com/rmsd/rmsd/messages"
)

func TestAggregateBatch(t *testing.T) {
	kid := func(id string, st messages.JobState, code messages.JobError, msg, doc string) messages.JobSnapshot {
		return messages.JobSnapshot{ID: id, NodeID: "node-" + id, State: st, ErrorCode: code, ErrorMessage: msg, ResultJSON: doc}
	}
	tests := []struct {
		name     string
		typ      messages.JobType
		kids     []messages.JobSnapshot // a kid with empty ID is missing
		wantDesc string
		wantMsg  string
		wantJSON string
		state    messages.JobState // expected outcome state, 0 = still running
	}{
		{
			name:     "in progress shows only non-zero fragments",
			typ:      messages.TypeFirmwareUpdate,
			kids:     []messages.JobSnapshot{kid("a", messages.StateCompleted, 0, "", ""), kid("b", messages.StateRunning, 0, "", "")},
			wantDesc: "Batch firmware update in progress (1/2 complete, 1 running)",
		},
		{
			name:     "switch wording while running",
			typ:      messages.TypeSwitchSystemImageUpdate,
			kids:     []messages.JobSnapshot{kid("a", messages.StateCompleted, 0, "", ""), kid("b", messages.StateQueued, 0, "", "")},
			wantDesc: "Batch switch system image update in progress (1/2 complete, 1 queued)",
		},
		{
			name:     "all completed",
			typ:      messages.TypeSwitchSystemImageUpdate,
			kids:     []messages.JobSnapshot{kid("a", messages.StateCompleted, 0, "", ""), kid("b", messages.StateCompleted, 0, "", "")},
			wantDesc: "All 2 switch system image updates completed successfully",
			state:    messages.StateCompleted,
		},
		{
			name:     "missing children fail the batch",
			typ:      messages.TypeSwitchCertificate,
			kids:     []messages.JobSnapshot{kid("a", messages.StateCompleted, 0, "", ""), {}},
			wantDesc: "Batch complete: 1/2 succeeded, 0 failed, 1 missing",
			wantMsg:  "1 of 2 switch certificate installs failed (1 jobs missing)",
			wantJSON: `{"completed":1,"failed":0,"missing":1,"total":2,"failed_jobs":[]}`,
			state:    messages.StateFailed,
		},
		{
			name:     "switch-shaped failure has no error code",
			typ:      messages.TypeSwitchSystemImageUpdate,
			kids:     []messages.JobSnapshot{kid("a", messages.StateCompleted, 0, "", ""), kid("b", messages.StateFailed, messages.ErrorTimeout, "SSH timeout", "")},
			wantDesc: "Batch complete: 1/2 succeeded, 1 failed",
			wantMsg:  "1 of 2 switch system image updates failed",
			wantJSON: `{"completed":1,"failed":1,"missing":0,"total":2,"failed_jobs":[{"job_id":"b","node_id":"node-b","error":"SSH timeout"}]}`,
			state:    messages.StateFailed,
		},
		{
			name:     "firmware failure with unparseable child result keeps it raw",
			typ:      messages.TypeFirmwareUpdate,
			kids:     []messages.JobSnapshot{kid("a", messages.StateFailed, messages.ErrorInternal, "boom", "not json")},
			wantDesc: "Batch complete: 0/1 succeeded, 1 failed",
			wantMsg:  "1 of 1 firmware updates failed",
			wantJSON: `{"completed":0,"failed":1,"missing":0,"total":1,"failed_jobs":[{"job_id":"a","node_id":"node-a","error_code":"Internal","error":"boom","raw_result_json":"not json"}]}`,
			state:    messages.StateFailed,
		},
		{
			name:     "firmware failure takes the child summary and raw error",
			typ:      messages.TypeFirmwareUpdate,
			kids:     []messages.JobSnapshot{kid("a", messages.StateFailed, messages.ErrorServerError, "bad", `{"summary":"BMC rejected image","raw_error":"500"}`)},
			wantDesc: "Batch complete: 0/1 succeeded, 1 failed",
			wantMsg:  "1 of 1 firmware updates failed",
			wantJSON: `{"completed":0,"failed":1,"missing":0,"total":1,"failed_jobs":[{"job_id":"a","node_id":"node-a","error_code":"ServerError","error":"bad","summary":"BMC rejected image","result":{"summary":"BMC rejected image","raw_error":"500"}}]}`,
			state:    messages.StateFailed,
		},
		{
			name:     "firmware failure without child result omits it",
			typ:      messages.TypeFirmwareUpdate,
			kids:     []messages.JobSnapshot{kid("a", messages.StateFailed, messages.ErrorOther, "x", "")},
			wantDesc: "Batch complete: 0/1 succeeded, 1 failed",
			wantMsg:  "1 of 1 firmware updates failed",
			wantJSON: `{"completed":0,"failed":1,"missing":0,"total":1,"failed_jobs":[{"job_id":"a","node_id":"node-a","error_code":"Other","error":"x"}]}`,
			state:    messages.StateFailed,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			desc, o := aggregateKids(tc.typ, tc.kids)
			if tc.state == 0 {
				if o != nil || desc != tc.wantDesc {
					t.Fatalf("description %q, outcome %+v; want description %q", desc, o, tc.wantDesc)
				}
				return
			}
			if o == nil || o.State != tc.state || o.Description != tc.wantDesc || o.Message != tc.wantMsg || o.ResultJSON != tc.wantJSON {
				t.Fatalf("outcome %+v\nwant %q %q %s", o, tc.wantDesc, tc.wantMsg, tc.wantJSON)
			}
			if tc.state == messages.StateFailed && o.Code != messages.ErrorOther {
				t.Fatalf("code %v", o.Code)
			}
		})
	}
}

// aggregateKids does what the registry and a batch actor do together for
// a parent whose children are kids (an empty ID is a missing child): count
// them, collect the failure entries, and settle once all are done.
func aggregateKids(typ messages.JobType, kids []messages.JobSnapshot) (string, *messages.Outcome) {
	var c childCounts
	ba := &batchActor{typ: typ}
	for i := range kids {
		k := &kids[i]
		if k.ID == "" {
			c.missing++
			continue
		}
		c.add(k.State, 1)
		if k.State.IsTerminal() {
			ba.add(i, k)
		}
	}
	if c.done() < len(kids) {
		return progressDescription(typ, c), nil
	}
	o := verdict(typ, c, ba.skipped, ba.failed)
	return "", &o
}

func TestAlreadyUpToDateChildrenAreNamedInTheDescription(t *testing.T) {
	done := func(doc string) messages.JobSnapshot {
		return messages.JobSnapshot{ID: "x", State: messages.StateCompleted, ResultJSON: doc}
	}
	_, o := aggregateKids(messages.TypeFirmwareUpdate, []messages.JobSnapshot{done(`{"status":"already_up_to_date"}`), done(`{"status":"completed"}`)})
	if o.Description != "1/2 firmware updates applied, 1 already up to date" {
		t.Fatalf("description %q", o.Description)
	}
	_, o = aggregateKids(messages.TypeFirmwareUpdate, []messages.JobSnapshot{done(`{"status":"already_up_to_date"}`), done(`{"note":"already_up_to_date"}`)})
	if o.Description != "1/2 firmware updates applied, 1 already up to date" {
		t.Fatalf("a document only mentioning the status counted: %q", o.Description)
	}
	_, o = aggregateKids(messages.TypeFirmwareUpdate, []messages.JobSnapshot{done(`{"status":"already_up_to_date"}`)})
	if o.Description != "All 1 nodes already up to date" {
		t.Fatalf("description %q", o.Description)
	}
}

func TestJobStateAndErrorNames(t *testing.T) {
	if got := []string{messages.StateQueued.String(), messages.StateRunning.String(), messages.StateCompleted.String(), messages.StateFailed.String()}; got[0] != "queued" || got[1] != "running" || got[2] != "completed" || got[3] != "failed" {
		t.Fatalf("wire strings %v", got)
	}
	if messages.StateQueued.IsTerminal() || messages.StateRunning.IsTerminal() || !messages.StateCompleted.IsTerminal() || !messages.StateFailed.IsTerminal() {
		t.Fatal("terminal set wrong")
	}
	cases := []struct {
		e                 messages.JobError
		name, text, label string
		wire              int32
	}{
		{messages.ErrorInvalidArgument, "InvalidArgument", "invalid argument", "invalid_argument", 3},
		{messages.ErrorFailedPrecondition, "FailedPrecondition", "failed precondition", "failed_precondition", 11},
		{messages.ErrorUpdateInProgress, "UpdateInProgress", "update in progress", "update_in_progress", 23},
		{messages.ErrorInvalidResponse, "InvalidResponse", "invalid response", "invalid_response", 14},
		{messages.ErrorTargetNotFound, "TargetNotFound", "target not found", "target_not_found", 21},
	}
	for _, c := range cases {
		if c.e.String() != c.name || c.e.Text() != c.text || c.e.MetricsLabel() != c.label || c.e.Wire() != c.wire {
			t.Errorf("%d: %s %s %s %d", c.e, c.e.String(), c.e.Text(), c.e.MetricsLabel(), c.e.Wire())
		}
	}
}
