package actors

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/messages"
)

// batchView is the result of aggregating a parent's children.
type batchView struct {
	// description is the in-progress description (outcome == nil).
	description string
	// outcome is set once every child is terminal or gone.
	outcome *messages.Outcome
}

// aggregateBatch computes a typed parent's state from its children. lookup
// returns a child's snapshot, or false when the child no longer exists (it
// then counts as missing). It returns false when the parent is not
// aggregated: unknown type, no children, or already terminal.
func aggregateBatch(parent *messages.JobSnapshot, lookup func(id string) (*messages.JobSnapshot, bool)) (batchView, bool) {
	if parent.State.IsTerminal() || parent.Type == messages.TypeNone || len(parent.ChildIDs) == 0 {
		return batchView{}, false
	}
	var completed, failed, missing, running, queued, skipped int
	var failedKids []*messages.JobSnapshot
	for _, id := range parent.ChildIDs {
		c, ok := lookup(id)
		switch {
		case !ok:
			missing++
		case c.State == messages.StateCompleted:
			completed++
			if resultStatus(c.ResultJSON) == "already_up_to_date" {
				skipped++
			}
		case c.State == messages.StateFailed:
			failed++
			failedKids = append(failedKids, c)
		case c.State == messages.StateRunning:
			running++
		default:
			queued++
		}
	}
	total := len(parent.ChildIDs)
	done := completed + failed + missing
	t := parent.Type
	if done < total {
		var b strings.Builder
		fmt.Fprintf(&b, "Batch %s in progress (%d/%d complete", t.BatchNoun(), done, total)
		if running > 0 {
			fmt.Fprintf(&b, ", %d running", running)
		}
		if queued > 0 {
			fmt.Fprintf(&b, ", %d queued", queued)
		}
		b.WriteString(")")
		return batchView{description: b.String()}, true
	}
	if failed > 0 || missing > 0 {
		desc := fmt.Sprintf("Batch complete: %d/%d succeeded, %d failed", completed, total, failed)
		msg := fmt.Sprintf("%d of %d %s failed", failed+missing, total, t.BatchNounPlural())
		if missing > 0 {
			desc += fmt.Sprintf(", %d missing", missing)
			msg += fmt.Sprintf(" (%d jobs missing)", missing)
		}
		out := messages.Outcome{
			State: messages.StateFailed, Description: desc, Code: messages.ErrorOther, Message: msg,
			ResultJSON: batchFailureJSON(t, completed, failed, missing, total, failedKids),
		}
		return batchView{outcome: &out}, true
	}
	var desc string
	switch {
	case skipped == total:
		desc = fmt.Sprintf("All %d nodes already up to date", total)
	case skipped > 0:
		desc = fmt.Sprintf("%d/%d %s applied, %d already up to date", total-skipped, total, t.BatchNounPlural(), skipped)
	default:
		desc = fmt.Sprintf("All %d %s completed successfully", total, t.BatchNounPlural())
	}
	out := messages.Completed(desc, "")
	return batchView{outcome: &out}, true
}

// resultStatus returns the top-level "status" of a result document, or "".
func resultStatus(doc string) string {
	if doc == "" {
		return ""
	}
	var v struct {
		Status string `json:"status"`
	}
	if json.Unmarshal([]byte(doc), &v) != nil {
		return ""
	}
	return v.Status
}

// batchSummary is the parent's failure document. Key order is part of the
// contract: completed, failed, missing, total, failed_jobs.
type batchSummary[T any] struct {
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Missing    int `json:"missing"`
	Total      int `json:"total"`
	FailedJobs []T `json:"failed_jobs"`
}

// leanFailedJob is a failed child in the switch-shaped document.
type leanFailedJob struct {
	JobID  string `json:"job_id"`
	NodeID string `json:"node_id"`
	Error  string `json:"error"`
}

// firmwareFailedJob is a failed child in the firmware-shaped document.
type firmwareFailedJob struct {
	JobID         string          `json:"job_id"`
	NodeID        string          `json:"node_id"`
	ErrorCode     string          `json:"error_code"`
	Error         string          `json:"error"`
	Summary       string          `json:"summary,omitempty"`
	Result        *firmwareResult `json:"result,omitempty"`
	RawResultJSON string          `json:"raw_result_json,omitempty"`
}

// firmwareResult is the typed view of a firmware leaf's failure document.
type firmwareResult struct {
	Status       string           `json:"status,omitempty"`
	Phase        string           `json:"phase,omitempty"`
	ErrorCode    string           `json:"error_code,omitempty"`
	ErrorMessage string           `json:"error_message,omitempty"`
	Summary      string           `json:"summary,omitempty"`
	Target       *firmwareTarget  `json:"target,omitempty"`
	TargetID     string           `json:"target_id,omitempty"`
	Redfish      *firmwareRedfish `json:"redfish,omitempty"`
	RawError     string           `json:"raw_error,omitempty"`
}

type firmwareTarget struct {
	Component    string `json:"component"`
	FirmwareFile string `json:"firmware_file"`
}

type firmwareRedfish struct {
	Code       string `json:"code,omitempty"`
	Message    string `json:"message,omitempty"`
	Severity   string `json:"severity,omitempty"`
	Resolution string `json:"resolution,omitempty"`
}

func (r firmwareResult) empty() bool {
	return r == firmwareResult{}
}

func batchFailureJSON(t messages.JobType, completed, failed, missing, total int, kids []*messages.JobSnapshot) string {
	var b []byte
	var err error
	if t == messages.TypeFirmwareUpdate {
		doc := batchSummary[firmwareFailedJob]{completed, failed, missing, total, make([]firmwareFailedJob, 0, len(kids))}
		for _, k := range kids {
			doc.FailedJobs = append(doc.FailedJobs, firmwareEntry(k))
		}
		b, err = json.Marshal(doc)
	} else {
		doc := batchSummary[leanFailedJob]{completed, failed, missing, total, make([]leanFailedJob, 0, len(kids))}
		for _, k := range kids {
			doc.FailedJobs = append(doc.FailedJobs, leanFailedJob{k.ID, k.NodeID, k.ErrorMessage})
		}
		b, err = json.Marshal(doc)
	}
	if err != nil { // unreachable: the documents hold only strings and ints
		return ""
	}
	return string(b)
}

func firmwareEntry(k *messages.JobSnapshot) firmwareFailedJob {
	e := firmwareFailedJob{JobID: k.ID, NodeID: k.NodeID, ErrorCode: k.ErrorCode.String(), Error: k.ErrorMessage}
	if k.ResultJSON == "" {
		return e
	}
	var r firmwareResult
	if err := json.Unmarshal([]byte(k.ResultJSON), &r); err != nil || r.empty() {
		e.RawResultJSON = k.ResultJSON
		return e
	}
	e.Result = &r
	e.Summary = r.Summary
	if e.Summary == "" {
		e.Summary = r.ErrorMessage
	}
	return e
}
