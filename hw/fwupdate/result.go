package fwupdate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"unicode/utf8"

	"github.com/rmsd/rmsd/messages"
)

// A target's outcome, and the job's status when it succeeds.
const (
	statusCompleted = "completed"
	statusUpToDate  = "already_up_to_date"
	statusFailed    = "failed"
)

// maxSummary bounds the summary of a failure document (upstream's cut).
const maxSummary = 1200

// targetResult is one target in a success document.
type targetResult struct {
	Component    string `json:"component"`
	Target       string `json:"target"`
	FirmwareFile string `json:"firmware_file"`
	Status       string `json:"status"`
	TaskID       string `json:"task_id,omitempty"`
	Version      string `json:"version,omitempty"`
}

func newTargetResult(t *Target, status, taskID string) targetResult {
	return targetResult{Component: t.label(), Target: t.Target, FirmwareFile: filepath.Base(t.File),
		Status: status, TaskID: taskID, Version: t.Version}
}

// successDoc is result_json of a completed update.
type successDoc struct {
	RackID                     string         `json:"rack_id"`
	NodeID                     string         `json:"node_id"`
	TargetsCompleted           int            `json:"targets_completed"`
	TargetsSkipped             int            `json:"targets_skipped"`
	Targets                    []targetResult `json:"targets"`
	Activated                  bool           `json:"activated"`
	ActivationCount            int            `json:"activation_count"`
	PostActivationVersionCheck string         `json:"post_activation_version_check"`
	Status                     string         `json:"status"`
}

// failureTarget names the target a failure concerns.
type failureTarget struct {
	Component       string `json:"component"`
	FirmwareFile    string `json:"firmware_file"`
	ExpectedVersion string `json:"expected_version,omitempty"`
}

// failureDoc is result_json of a failed update.
type failureDoc struct {
	Status       string         `json:"status"`
	Phase        string         `json:"phase"`
	ErrorCode    string         `json:"error_code"`
	ErrorMessage string         `json:"error_message"`
	Summary      string         `json:"summary"`
	Target       *failureTarget `json:"target,omitempty"`
}

// complete records the job Completed: "already_up_to_date" when no target
// needed an upload.
func (r *run) complete(check string) {
	doc := successDoc{RackID: r.plan.Node.RackID, NodeID: r.plan.Node.ID, Targets: r.results,
		Activated: r.activations > 0, ActivationCount: r.activations, PostActivationVersionCheck: check}
	for _, t := range r.results {
		if t.Status == statusUpToDate {
			doc.TargetsSkipped++
		} else {
			doc.TargetsCompleted++
		}
	}
	desc := "Firmware update completed"
	doc.Status = statusCompleted
	if doc.TargetsCompleted == 0 {
		desc, doc.Status = "Firmware already up to date", statusUpToDate
	}
	_ = r.job.Complete(desc, encode(doc, `{"status":"`+doc.Status+`"}`))
}

// fail records the job Failed. When the job's context has ended, the
// failure is the cancellation, whatever the step made of it.
func (r *run) fail(ctx context.Context, se *stepError) {
	doc := failureDoc{Status: statusFailed, Phase: se.phase}
	code, msg, desc := classify(se.err), se.err.Error(), "Firmware update failed"
	if ctx.Err() != nil {
		doc.Phase, code, desc = phaseCancelled, messages.ErrorOther, "Firmware update cancelled"
		msg = "firmware update job cancelled " + se.during
		if errors.Is(context.Cause(ctx), messages.ErrShuttingDown) {
			msg += ": rmsd is shutting down"
		}
	}
	doc.ErrorCode, doc.ErrorMessage = code.String(), msg
	summary := fmt.Sprintf("firmware update of node %s failed in phase %s", r.plan.Node.ID, doc.Phase)
	if t := se.target; t != nil {
		doc.Target = &failureTarget{Component: t.label(), FirmwareFile: filepath.Base(t.File), ExpectedVersion: t.Version}
		summary += fmt.Sprintf(" (target %s, %s)", t.label(), doc.Target.FirmwareFile)
	}
	doc.Summary = clip(summary+": "+msg, maxSummary)
	_ = r.job.Fail(messages.Failure{Code: code, Description: desc, Message: msg,
		ResultJSON: encode(doc, messages.FailureJSON(code, msg))})
}

// encode renders doc, or fallback should that ever fail.
func encode(doc any, fallback string) string {
	b, err := json.Marshal(doc)
	if err != nil { // unreachable: the documents hold strings, numbers and bools
		return fallback
	}
	return string(b)
}

// clip cuts s to at most n bytes without splitting a character.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
