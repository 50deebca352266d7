package nvssvt_test

import (
	"errors"
	"testing"

	"github.com/rmsd/rmsd/hw/nvssvt"
)

func TestParseReportIsTolerant(t *testing.T) {
	for _, tc := range []struct {
		name, doc  string
		status     string
		sum        nvssvt.Summary
		firstCheck string
	}{
		{"the defined shape", `{"tool":"nvssvt","status":"PASS","summary":{"total":1,"passed":1},
			"duts":[{"id":"n1","status":"PASS","checks":[{"name":"a","status":"PASS"}]}]}`,
			nvssvt.StatusPass, nvssvt.Summary{Total: 1, Passed: 1}, "a"},
		{"other key case and words", `{"Status":"passed","DUTs":[{"Dut":"n1","Result":"ok",
			"Tests":[{"Check":"a","Result":"Success"},{"Name":"b","Status":"skipped","Details":"n/a"}]}], "Extra": {"x": 1}}`,
			nvssvt.StatusPass, nvssvt.Summary{Total: 2, Passed: 1, Skipped: 1}, "a"},
		{"statuses left out", `{"results":[{"id":"n1","checks":[{"name":"a","status":"PASS"},{"name":"b","status":"FAIL","reason":"r"}]}]}`,
			nvssvt.StatusFail, nvssvt.Summary{Total: 2, Passed: 1, Failed: 1}, "a"},
		{"a PASS the checks contradict", `{"status":"PASS","duts":[{"id":"n1","status":"PASS","checks":[{"name":"a","status":"FAIL"}]}]}`,
			nvssvt.StatusFail, nvssvt.Summary{Total: 1, Failed: 1}, "a"},
		{"one DUT at the top", `{"id":"n1","checks":[{"name":"a","status":"weird"}]}`,
			nvssvt.StatusError, nvssvt.Summary{Total: 1, Errors: 1}, "a"},
		{"summaries only", `{"duts":[{"id":"n1","summary":{"total":3,"passed":2,"failed":1}}]}`,
			nvssvt.StatusFail, nvssvt.Summary{Total: 3, Passed: 2, Failed: 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := nvssvt.ParseReport([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != tc.status || r.Summary != tc.sum || r.DUTs[0].Summary != tc.sum {
				t.Errorf("status %s summary %+v (DUT %+v), want %s %+v", r.Status, r.Summary, r.DUTs[0].Summary, tc.status, tc.sum)
			}
			if tc.firstCheck != "" && r.DUTs[0].Checks[0].Name != tc.firstCheck {
				t.Errorf("checks %+v", r.DUTs[0].Checks)
			}
		})
	}
}

func TestParseReportRefusesGarbage(t *testing.T) {
	for _, doc := range []string{"", "   ", "null", "[]", `"PASS"`, `{"duts":[]}`, `{"status":"PASS"}`,
		`{"duts":[1]}`, `{"duts":[{"checks":[7]}]}`, `{"duts": [ not json`} {
		if r, err := nvssvt.ParseReport([]byte(doc)); !errors.Is(err, nvssvt.ErrReport) {
			t.Errorf("%q: %+v, %v", doc, r, err)
		}
	}
}

func FuzzParseReport(f *testing.F) {
	f.Add([]byte(`{"duts":[{"id":"n1","checks":[{"name":"a","status":"FAIL"}]}]}`))
	f.Add([]byte(`{"id":"n1","summary":{"total":1}}`))
	f.Add([]byte(`{"status":"skip","duts":[{"id":"a","checks":[{"name":"x","status":"PASS"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := nvssvt.ParseReport(data)
		if err != nil {
			return
		}
		if len(r.DUTs) == 0 {
			t.Fatal("a report without DUTs was accepted")
		}
		switch r.Status {
		case nvssvt.StatusPass, nvssvt.StatusFail, nvssvt.StatusError:
		default:
			t.Fatalf("status %q", r.Status)
		}
		if r.Status == nvssvt.StatusPass && len(r.FailedChecks()) > 0 {
			t.Fatalf("PASS with failed checks %q", r.FailedChecks())
		}
	})
}
