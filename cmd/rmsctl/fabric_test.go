package main

import (
	"bufio"
	"context"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

const topology = "gb200_nvl72r1_c2g4_topology"

// TestFabricConfigureThenStatus reconciles the simulated rack's fabric
// with --watch through a pipe (plain lines, each printed as it comes: the
// first while the job runs), then reads it back with fabric status.
func TestFabricConfigureThenStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, rmsctlBinary, "--addr", daemonAddr, "fabric", "configure", "--rack", rack,
		"--topology", topology, "--static", "fm_config:LOG_LEVEL=3", "--watch", "--interval", "100ms")
	cmd.Dir = daemonDir
	cmd.Env = append(environWithout("COLUMNS", "LINES"), "XDG_CONFIG_HOME="+t.TempDir())
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stage := regexp.MustCompile(`job \S+ rack-001/rack-001:scale-up-fabric Running: stage (\d+)/13: `)
	var lines []string
	firstStageAt, completedAt := -1, -1
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		if firstStageAt < 0 && stage.MatchString(line) {
			firstStageAt = len(lines)
		}
		if completedAt < 0 && strings.Contains(line, "Completed: Scale-up fabric reconciled") {
			completedAt = len(lines)
		}
		lines = append(lines, line)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fabric configure --watch: %v\n%s\n%s", err, strings.Join(lines, "\n"), stderr.String())
	}
	out := strings.Join(lines, "\n")
	if !strings.HasPrefix(out, "scale-up fabric reconcile of rack rack-001 started: job ") {
		t.Errorf("fabric configure did not name its job:\n%s", out)
	}
	if firstStageAt < 0 || completedAt < 0 || firstStageAt > completedAt {
		t.Errorf("want a stage N/13 line while the job runs, then its completion:\n%s", out)
	}
	if strings.Contains(out, "\x1b") || strings.Contains(out, "children finished") || strings.Contains(out, "child ") {
		t.Errorf("the plain view has escapes or the reconcile's node holds:\n%q", out)
	}

	status := ok(t, "fabric", "status", "--rack", rack)
	primary := regexp.MustCompile(`(?m)^primary:\s+(rack-001-switch-\d\d)$`).FindStringSubmatch(status)
	if primary == nil || !strings.Contains(status, "topology: "+topology) ||
		!regexp.MustCompile(`(?m)^`+primary[1]+`\s+enabled\s+ok\s`).MatchString(status) ||
		strings.Count(status, " disabled ") != 8 {
		t.Errorf("fabric status after the reconcile: want one enabled primary on %s and 8 disabled switches:\n%s", topology, status)
	}
	st := jsonReply(t, ok(t, "-o", "json", "fabric", "status", "--rack", rack, "rack-001-switch-02", primary[1]),
		func() *rmspb.GetScaleUpFabricStatusResponse { return &rmspb.GetScaleUpFabricStatusResponse{} })
	if st.GetFabricStatus().GetTopologyType() != topology || len(st.GetFabricStatus().GetSwitches()) != 2 {
		t.Errorf("-o json fabric status of two switches: %v", st)
	}

	// Submitted again, nothing differs.
	again := jsonReply(t, ok(t, "-o", "json", "fabric", "configure", "--rack", rack, "--topology", topology, "--static", "fm_config:LOG_LEVEL=3"),
		func() *rmspbv2.ConfigureScaleUpFabricManagerResponse {
			return &rmspbv2.ConfigureScaleUpFabricManagerResponse{}
		})
	if again.GetJobId() == "" {
		t.Fatalf("-o json fabric configure: %v", again)
	}
	if out := ok(t, "jobs", "watch", again.GetJobId(), "--interval", "100ms"); !strings.Contains(out, "Completed: Scale-up fabric reconciled: no change needed") {
		t.Errorf("a second reconcile to the same state:\n%s", out)
	}
}

// TestFabricWatchOnATerminalWithoutASize: a terminal that reports no size
// (0x0) still gets the live view, at 80 columns.
func TestFabricWatchOnATerminalWithoutASize(t *testing.T) {
	started := jsonReply(t, ok(t, "-o", "json", "fabric", "configure", "--rack", rack, "--topology", topology),
		func() *rmspbv2.ConfigureScaleUpFabricManagerResponse {
			return &rmspbv2.ConfigureScaleUpFabricManagerResponse{}
		})
	out, code := inTerminal(t, nil, nil, "jobs", "watch", started.GetJobId(), "--interval", "100ms")
	if code != 0 {
		t.Fatalf("jobs watch: exit %d:\n%q", code, out)
	}
	if !regexp.MustCompile(`\[=*>?-*\]\s+\d+ % (Running: stage \d+/13|Completed)`).MatchString(out) {
		t.Errorf("no bar drawn on a terminal without a size:\n%q", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, "] ") {
			continue // the summary printed after the view, which may wrap
		}
		if w := len([]rune(strings.TrimRight(stripEscapes(line), "\r "))); w > 80 {
			t.Errorf("a line of %d columns on an 80-column fallback: %q", w, line)
		}
	}
}

func TestFabricRefusals(t *testing.T) {
	if r := rmsctl(t, "fabric", "configure", "--rack", rack, "--topology", topology, "rack-001-compute-01"); r.code != 5 || !strings.Contains(r.stderr, "InvalidArgument") || !strings.Contains(r.stderr, "not a switch") {
		t.Errorf("a compute tray in the fabric: exit %d, %q; want 5 (rejected)", r.code, r.stderr)
	}
	if r := rmsctl(t, "fabric", "configure", "--rack", rack, "--topology", topology, "--static", "LOG_LEVEL=3"); r.code != 2 || !strings.Contains(r.stderr, "FILE:KEY=VALUE") {
		t.Errorf("a static entry without its file: exit %d, %q; want 2", r.code, r.stderr)
	}
	if r := rmsctl(t, "fabric", "status", "--rack", rack, "rack-001-compute-01"); r.code != 1 || !strings.Contains(r.stdout, "switch trays only") {
		t.Errorf("fabric status of a compute tray: exit %d, %q %q; want 1 with the reason in its row", r.code, r.stdout, r.stderr)
	}
}

// stripEscapes removes the terminal's CSI sequences from s.
func stripEscapes(s string) string {
	return regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`).ReplaceAllString(s, "")
}
