package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// coldRebootNodes are the nodes the cold reboot tests run the runbook on:
// every power shelf, two compute trays and a switch (the left-out trays
// that were on are powered on again when it ends).
var coldRebootNodes = []string{
	"rack-001-compute-01", "rack-001-compute-02", "rack-001-switch-01",
	"rack-001-powershelf-01", "rack-001-powershelf-02", "rack-001-powershelf-03", "rack-001-powershelf-04",
	"rack-001-powershelf-05", "rack-001-powershelf-06", "rack-001-powershelf-07", "rack-001-powershelf-08",
}

// shortWaits are the runbook's waits shortened for simulated devices, which
// reboot in well under a second at the tests' time scale.
var shortWaits = []string{"--prestage-shutdown-floor", "1s", "--discharge-floor", "1s", "--bmc-up-floor", "1s",
	"--nvos-hello-backoff", "1s", "--compute-boot-wait", "1s", "--poll-every", "1s"}

// runningStage is the parent's bar (or line) during a runbook stage, the
// whole text up to the end of the line: its step closes it.
var runningStage = regexp.MustCompile(`Running: stage ([1-9])/9: ([^\r\n]*)`)

// TestColdRebootWatchedOnAWideTerminal: `rmsctl cold-reboot --watch` on a
// terminal 200 columns wide starts the job and draws its stage as the
// parent's bar, the step text whole, from a first frame drawn while the
// job still runs until it completes; no tray is left dark.
func TestColdRebootWatchedOnAWideTerminal(t *testing.T) {
	args := append(append([]string{"cold-reboot", "--rack", rack}, shortWaits...), "--watch", "--interval", "100ms")
	out, code := inTerminal(t, &pty.Winsize{Rows: 60, Cols: 200}, nil, append(args, coldRebootNodes...)...)
	if code != 0 {
		t.Fatalf("cold-reboot --watch: exit %d:\n%q", code, out)
	}
	if !strings.Contains(out, "SUCCESS: Cold reboot started for 11 nodes") || !strings.Contains(out, "\x1b[") {
		t.Errorf("cold-reboot --watch did not start the job or draw in place:\n%q", out)
	}
	frames := runningStage.FindAllStringSubmatchIndex(out, -1)
	done := strings.Index(out, "Completed: Cold reboot completed")
	if len(frames) == 0 || done < 0 {
		t.Fatalf("no stage bar (Running: stage N/9) or no completion drawn:\n%q", out)
	}
	if frames[0][0] > done {
		t.Errorf("the first frame came after the job had ended:\n%q", out)
	}
	seen := map[string]bool{}
	for _, f := range frames {
		n, text := out[f[2]:f[3]], strings.TrimRight(out[f[4]:f[5]], " ")
		seen[n] = true
		if strings.Contains(text, "…") || !regexp.MustCompile(`\(runbook step [0-9-]+\)$`).MatchString(text) {
			t.Errorf("stage %s/9 cut on a 200-column terminal: %q", n, text)
		}
	}
	if len(seen) < 2 {
		t.Errorf("the bar showed %d stage(s) of a whole run, want it to follow them: %v", len(seen), seen)
	}
	if strings.Contains(out, "children finished") || strings.Contains(out, "Reserved by") {
		t.Errorf("the view counts or draws the runbook's node holds:\n%q", out)
	}
	if got := ok(t, "power", "get", "--rack", rack, "rack-001-compute-01", "rack-001-compute-03"); strings.Count(got, " ON ") != 2 {
		t.Errorf("after the cold reboot, a rebooted and a left-out compute tray should both be on:\n%s", got)
	}
}

func TestColdRebootRefusesBadWaitsAndMissingNodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cold-reboot", "--rack", rack, "--discharge-floor", "1500ms", "rack-001-compute-01"}, "--discharge-floor 1.5s: want whole seconds"},
		{[]string{"cold-reboot", "--rack", rack, "rack-001-compute-99"}, "has no node rack-001-compute-99"},
		{[]string{"cold-reboot", "rack-001-compute-01"}, `"rack" not set`},
	} {
		if r := rmsctl(t, tc.args...); r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 saying %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
