package nvssvt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The report NVSSVT writes to --report is a JSON object (rmsd's definition;
// the upstream notes do not give one):
//
//	{"tool": "nvssvt", "version": "…", "status": "PASS",
//	 "summary": {"total": 5, "passed": 5, "failed": 0, "skipped": 0, "errors": 0},
//	 "duts": [{"id": "<node id>", "bmc": "<host:port>", "status": "PASS",
//	           "summary": {…},
//	           "checks": [{"name": "redfish_service_root", "status": "PASS", "message": "…"}]}]}
//
// ParseReport reads it tolerantly: key case does not matter, unknown keys
// are ignored, a status may be any of PASS/PASSED/OK/SUCCESS,
// FAIL/FAILED, SKIP/SKIPPED/NA, ERROR (other words count as ERROR), "dut"
// or "name" may stand for "id", "result" for "status", "results" for
// "duts", "details" or "reason" for "message"; a report that is one DUT
// (checks at the top level) is one DUT; summaries and statuses are
// computed from the checks when the report leaves them out, and a DUT's
// summary always agrees with its checks.

// The normalised statuses.
const (
	StatusPass  = "PASS"
	StatusFail  = "FAIL"
	StatusSkip  = "SKIP"
	StatusError = "ERROR"
)

// Report is a parsed NVSSVT report.
type Report struct {
	Tool    string  `json:"tool,omitempty"`
	Version string  `json:"version,omitempty"`
	Status  string  `json:"status"`
	Summary Summary `json:"summary"`
	DUTs    []DUT   `json:"duts"`
}

// DUT is one Device Under Test's result.
type DUT struct {
	ID      string  `json:"id"`
	BMC     string  `json:"bmc,omitempty"`
	Host    string  `json:"host,omitempty"`
	Status  string  `json:"status"`
	Summary Summary `json:"summary"`
	Checks  []Check `json:"checks"`
}

// Check is one check on a DUT.
type Check struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// Summary counts checks by status.
type Summary struct {
	Total   int `json:"total"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	Errors  int `json:"errors"`
}

// ErrReport marks a report that is missing or cannot be read.
var ErrReport = errors.New("nvssvt report")

// ParseReport parses a report (see above).
func ParseReport(data []byte) (*Report, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: the report is empty", ErrReport)
	}
	top, err := objectOf(data)
	if err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrReport, err)
	}
	r := &Report{Tool: top.str("tool"), Version: top.str("version")}
	raw := top.list("duts", "results")
	if raw == nil && top.has("checks") {
		raw = []json.RawMessage{data}
	}
	for i, d := range raw {
		f, err := objectOf(d)
		if err != nil {
			return nil, fmt.Errorf("%w: DUT %d: not a JSON object: %v", ErrReport, i, err)
		}
		dut, err := parseDUT(f)
		if err != nil {
			return nil, fmt.Errorf("%w: DUT %d: %v", ErrReport, i, err)
		}
		r.DUTs = append(r.DUTs, dut)
	}
	if len(r.DUTs) == 0 {
		return nil, fmt.Errorf("%w: the report has no DUT results", ErrReport)
	}
	for _, d := range r.DUTs {
		r.Summary.add(d.Summary)
	}
	r.Status = normalise(top.str("status", "result"))
	// The checks decide: a tool's own verdict stands only when it is FAIL
	// or ERROR, or a PASS the checks bear out (a SKIP overall says
	// nothing of checks that ran).
	if r.Status == "" || r.Status == StatusSkip || (r.Status == StatusPass && !r.passed()) {
		r.Status = r.derivedStatus()
	}
	return r, nil
}

func parseDUT(f fields) (DUT, error) {
	d := DUT{ID: f.str("id", "dut", "name"), BMC: f.str("bmc"), Host: f.str("host")}
	for i, c := range f.list("checks", "tests") {
		cf, err := objectOf(c)
		if err != nil {
			return DUT{}, fmt.Errorf("check %d: not a JSON object: %v", i, err)
		}
		ck := Check{Name: cf.str("name", "check", "id"), Status: normalise(cf.str("status", "result")),
			Message: cf.str("message", "details", "reason")}
		if ck.Status == "" {
			ck.Status = StatusError
		}
		d.Checks = append(d.Checks, ck)
		d.Summary.Count(ck.Status)
	}
	if len(d.Checks) == 0 {
		if s, ok := f.object("summary"); ok {
			d.Summary = Summary{Total: s.num("total"), Passed: s.num("passed", "pass"), Failed: s.num("failed", "fail"),
				Skipped: s.num("skipped", "skip"), Errors: s.num("errors", "error")}
		}
	}
	d.Status = normalise(f.str("status", "result"))
	if d.Status == "" || (d.Status == StatusPass && (d.Summary.Failed > 0 || d.Summary.Errors > 0)) {
		d.Status = d.Summary.status()
	}
	return d, nil
}

// passed reports whether every DUT passed.
func (r *Report) passed() bool {
	for _, d := range r.DUTs {
		if d.Status != StatusPass {
			return false
		}
	}
	return true
}

func (r *Report) derivedStatus() string {
	if r.passed() {
		return StatusPass
	}
	for _, d := range r.DUTs {
		if d.Status == StatusError {
			return StatusError
		}
	}
	return StatusFail
}

// FailedChecks lists the checks that did not pass or skip, as
// "<dut>: <check>: <message>", in report order.
func (r *Report) FailedChecks() []string {
	var out []string
	for _, d := range r.DUTs {
		for _, c := range d.Checks {
			if c.Status == StatusFail || c.Status == StatusError {
				s := c.Name
				if c.Message != "" {
					s += ": " + c.Message
				}
				if len(r.DUTs) > 1 {
					s = d.ID + ": " + s
				}
				out = append(out, s)
			}
		}
		if len(d.Checks) == 0 && d.Status != StatusPass {
			out = append(out, fmt.Sprintf("%s: %s", d.ID, d.Status))
		}
	}
	return out
}

// Count adds one check of status to s: PASS, FAIL and SKIP count as
// such, any other status as an error.
func (s *Summary) Count(status string) {
	s.Total++
	switch status {
	case StatusPass:
		s.Passed++
	case StatusFail:
		s.Failed++
	case StatusSkip:
		s.Skipped++
	default:
		s.Errors++
	}
}

func (s *Summary) add(o Summary) {
	s.Total += o.Total
	s.Passed += o.Passed
	s.Failed += o.Failed
	s.Skipped += o.Skipped
	s.Errors += o.Errors
}

func (s Summary) status() string {
	switch {
	case s.Errors > 0:
		return StatusError
	case s.Failed > 0:
		return StatusFail
	case s.Passed > 0 || s.Total > 0 && s.Skipped == s.Total:
		return StatusPass
	default:
		return StatusError
	}
}

// normalise maps a status word onto PASS, FAIL, SKIP or ERROR; "" stays
// "".
func normalise(s string) string {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "":
		return ""
	case "PASS", "PASSED", "OK", "SUCCESS", "SUCCEEDED":
		return StatusPass
	case "FAIL", "FAILED", "FAILURE":
		return StatusFail
	case "SKIP", "SKIPPED", "NA", "N/A", "NOT_APPLICABLE":
		return StatusSkip
	default:
		return StatusError
	}
}

// fields is a JSON object by lower-cased key.
type fields map[string]json.RawMessage

func objectOf(data []byte) (fields, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("null")
	}
	f := make(fields, len(m))
	for k, v := range m {
		f[strings.ToLower(k)] = v
	}
	return f, nil
}

func (f fields) has(name string) bool { _, ok := f[name]; return ok }

// str returns the first of names that is a string (or a number, as text).
func (f fields) str(names ...string) string {
	for _, n := range names {
		var s string
		if json.Unmarshal(f[n], &s) == nil && s != "" {
			return s
		}
		var num json.Number
		if json.Unmarshal(f[n], &num) == nil && num != "" {
			return num.String()
		}
	}
	return ""
}

func (f fields) num(names ...string) int {
	for _, n := range names {
		var v int
		if json.Unmarshal(f[n], &v) == nil {
			return v
		}
	}
	return 0
}

func (f fields) list(names ...string) []json.RawMessage {
	for _, n := range names {
		var l []json.RawMessage
		if json.Unmarshal(f[n], &l) == nil && l != nil {
			return l
		}
	}
	return nil
}

func (f fields) object(name string) (fields, bool) {
	o, err := objectOf(f[name])
	return o, err == nil
}
