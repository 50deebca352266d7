package actors

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/messages"
)

// progressDescription is an open batch parent's description:
// Batch {noun} in progress ({done}/{total} complete[, {n} running][, {n} queued]).
func progressDescription(t messages.JobType, c childCounts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Batch %s in progress (%d/%d complete", t.BatchNoun(), c.done(), c.total())
	if c.running > 0 {
		fmt.Fprintf(&b, ", %d running", c.running)
	}
	if c.queued > 0 {
		fmt.Fprintf(&b, ", %d queued", c.queued)
	}
	b.WriteString(")")
	return b.String()
}

// verdict is a batch parent's outcome once every child is terminal or
// gone: Completed when none failed or went missing (noting children that
// were already up to date), Failed with the failure document otherwise.
// failed holds the failed children's entries in attach order.
func verdict(t messages.JobType, c childCounts, skipped int, failed []failedEntry) messages.Outcome {
	total := c.total()
	if c.failed > 0 || c.missing > 0 {
		desc := fmt.Sprintf("Batch complete: %d/%d succeeded, %d failed", c.completed, total, c.failed)
		msg := fmt.Sprintf("%d of %d %s failed", c.failed+c.missing, total, t.BatchNounPlural())
		if c.missing > 0 {
			desc += fmt.Sprintf(", %d missing", c.missing)
			msg += fmt.Sprintf(" (%d jobs missing)", c.missing)
		}
		return messages.Outcome{
			State: messages.StateFailed, Description: desc, Code: messages.ErrorOther, Message: msg,
			ResultJSON: batchFailureJSON(t, c, failed),
		}
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
	return messages.Completed(desc, "")
}

// alreadyUpToDate reports whether a completed child's result document says
// it had nothing to do ("status":"already_up_to_date").
func alreadyUpToDate(doc string) bool {
	if !strings.Contains(doc, "already_up_to_date") {
		return false
	}
	var v struct {
		Status string `json:"status"`
	}
	return json.Unmarshal([]byte(doc), &v) == nil && v.Status == "already_up_to_date"
}

// failedEntry is one failed child in a batch failure document, built once
// when the child is sealed. Exactly one of lean and firmware is used,
// depending on the parent's type.
type failedEntry struct {
	index    int
	lean     leanFailedJob
	firmware firmwareFailedJob
}

func newFailedEntry(t messages.JobType, index int, k *messages.JobSnapshot) failedEntry {
	e := failedEntry{index: index}
	if t == messages.TypeFirmwareUpdate {
		e.firmware = firmwareEntry(k)
	} else {
		e.lean = leanFailedJob{k.ID, k.NodeID, k.ErrorMessage}
	}
	return e
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

func batchFailureJSON(t messages.JobType, c childCounts, failed []failedEntry) string {
	total := c.total()
	var b []byte
	var err error
	if t == messages.TypeFirmwareUpdate {
		doc := batchSummary[firmwareFailedJob]{c.completed, c.failed, c.missing, total, make([]firmwareFailedJob, 0, len(failed))}
		for _, e := range failed {
			doc.FailedJobs = append(doc.FailedJobs, e.firmware)
		}
		b, err = json.Marshal(doc)
	} else {
		doc := batchSummary[leanFailedJob]{c.completed, c.failed, c.missing, total, make([]leanFailedJob, 0, len(failed))}
		for _, e := range failed {
			doc.FailedJobs = append(doc.FailedJobs, e.lean)
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
