package nvssvt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// maxResultJSON bounds a scan job's result document: a report with more
// checks than fit keeps its summaries and drops the checks.
const maxResultJSON = 1 << 20

// Plan is the scan job of one node.
type Plan struct {
	Node           hw.Node
	ConfigOverride string
}

// Scan is the plan's scan, logged under the job's id.
func (p Plan) Scan(jobID string) Scan {
	s := Scan{ID: jobID, NodeID: p.Node.ID, Host: p.Node.Host, ConfigOverride: p.ConfigOverride}
	if p.Node.BMC != nil {
		s.BMC = *p.Node.BMC
	}
	return s
}

// Check refuses, without I/O, a node NVSSVT cannot scan.
func (p Plan) Check() error {
	if p.Node.BMC == nil {
		return errors.New("node has no bmc_endpoint: NVSSVT reaches the DUT over its BMC")
	}
	if strings.ContainsRune(p.Node.ID, 0) {
		return errors.New("node_id contains a NUL character, which no command-line argument can carry")
	}
	return p.Scan("").Check()
}

// Workflow returns the job workflow of the plan: one NVSSVT run, its
// report in the job's result_json. The job completes when every check
// passed and fails otherwise, naming the failed checks (the report is in
// result_json either way), or why there is no report.
func (p Plan) Workflow(r *Runner) messages.Workflow {
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		scan := p.Scan(job.ID())
		job.Progress("NVSSVT scan starting")
		res, err := r.Run(ctx, scan, func(description string) { job.Progress(description) })
		doc := p.document(res)
		secrets := scan.secrets()
		if err != nil {
			code := classify(err)
			msg := hw.Scrub(fmt.Sprintf("System validation of %s did not run to a report: %v", p.Node.ID, err), secrets...)
			switch {
			case errors.Is(err, ErrNotConfigured), errors.Is(err, ErrNoCredentials), errors.Is(err, ErrNoAddress):
				msg = hw.Scrub(fmt.Sprintf("System validation of %s not started: %v", p.Node.ID, err), secrets...)
			case ctx.Err() != nil:
				msg = fmt.Sprintf("System validation of %s cancelled: %v; the NVSSVT process group was killed", p.Node.ID, err)
			}
			doc["status"], doc["error_code"], doc["error_message"] = "failed", code.String(), msg
			_ = job.Fail(messages.Failure{Code: code, Description: "System validation failed", Message: msg,
				ResultJSON: render(doc, secrets)})
			return
		}
		rep := res.Report
		if rep.Status != StatusPass {
			failed := rep.FailedChecks()
			msg := fmt.Sprintf("System validation of %s: %s, %d of %d checks failed", p.Node.ID, rep.Status,
				rep.Summary.Failed+rep.Summary.Errors, rep.Summary.Total)
			if len(failed) > 0 {
				msg += ": " + summarise(failed)
			}
			msg = hw.Scrub(msg, secrets...)
			doc["status"], doc["error_code"], doc["error_message"] = "failed", messages.ErrorOther.String(), msg
			_ = job.Fail(messages.Failure{Code: messages.ErrorOther, Description: "System validation failed", Message: msg,
				ResultJSON: render(doc, secrets)})
			return
		}
		doc["status"] = "completed"
		_ = job.Complete(fmt.Sprintf("System validation passed: %d of %d checks passed", rep.Summary.Passed, rep.Summary.Total),
			render(doc, secrets))
	})
}

// document is the scan job's result document without its status.
func (p Plan) document(res Result) map[string]any {
	doc := map[string]any{"rack_id": p.Node.RackID, "node_id": p.Node.ID}
	if res.LogDir != "" {
		doc["log_dir"] = res.LogDir
	}
	if res.Duration > 0 {
		doc["exit_code"] = res.ExitCode
		doc["duration_seconds"] = math.Round(res.Duration.Seconds()*1000) / 1000
		doc["output_truncated"] = res.OutputTruncated
	}
	if rep := res.Report; rep != nil {
		doc["validation"] = rep.Status
		doc["summary"] = rep.Summary
		doc["duts"] = rep.DUTs
		if rep.Tool != "" || rep.Version != "" {
			doc["tool"] = map[string]string{"name": rep.Tool, "version": rep.Version}
		}
	}
	return doc
}

// render writes doc as JSON, scrubbed; too large, without the checks.
func render(doc map[string]any, secrets []string) string {
	b, err := json.Marshal(doc)
	if err == nil && len(b) > maxResultJSON {
		if duts, ok := doc["duts"].([]DUT); ok {
			lean := make([]DUT, len(duts))
			for i, d := range duts {
				d.Checks = nil
				lean[i] = d
			}
			doc["duts"], doc["checks_omitted"] = lean, true
			b, err = json.Marshal(doc)
		}
	}
	if err != nil { // unreachable: the document holds strings, numbers and the report's types
		return `{"status":"failed"}`
	}
	return hw.Scrub(string(b), secrets...)
}

// classify maps why a run produced no report to the job error.
func classify(err error) messages.JobError {
	switch {
	case errors.Is(err, ErrTimeout):
		return messages.ErrorTimeout
	case errors.Is(err, ErrReport):
		return messages.ErrorInvalidResponse
	case errors.Is(err, ErrNotConfigured):
		return messages.ErrorFailedPrecondition
	case errors.Is(err, ErrNoCredentials), errors.Is(err, ErrNoAddress):
		return messages.ErrorInvalidArgument
	case errors.Is(err, ErrStart):
		return messages.ErrorInternal
	default:
		return messages.ErrorOther
	}
}

// summarise joins the first few items of a list, counting the rest.
func summarise(items []string) string {
	const most = 5
	if len(items) <= most {
		return strings.Join(items, "; ")
	}
	return strings.Join(items[:most], "; ") + fmt.Sprintf("; and %d more", len(items)-most)
}
