package main

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/opspb"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// pickNode is the simulated node id as a one-node NodeSet in protobuf
// JSON, credentials included (as docs/api.md's pick does).
func pickNode(t *testing.T, id string) string {
	t.Helper()
	for _, n := range simulatedNodes(t).GetNodes() {
		if n.GetNodeId() == id {
			raw, err := protojson.Marshal(&rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{n}})
			if err != nil {
				t.Fatal(err)
			}
			return string(raw)
		}
	}
	t.Fatalf("%s not in the nodes file", id)
	return ""
}

// TestAuditListAndJobsList: a switch password rotation and an in-band
// failure are in `audit list` with their caller, rack, node, job and
// outcome, reads are not, and no password reaches the audit log, its
// stream or the output; `jobs list` finds the rotation's job by type,
// state, rack and time.
func TestAuditListAndJobsList(t *testing.T) {
	const (
		sw      = "rack-001-switch-05"
		missing = "rack-001-compute-97"
	)
	nodes := pickNode(t, sw)
	var secrets []string
	for _, n := range simulatedNodes(t).GetNodes() {
		if n.GetNodeId() == sw {
			secrets = append(secrets, n.GetBmcEndpoint().GetCredentials().GetUserPass().GetPassword(),
				n.GetHostEndpoint().GetCredentials().GetUserPass().GetPassword())
		}
	}
	const newPassword = "sim-bmc-password" // as docs/api.md: the simulator's own
	secrets = append(secrets, newPassword)

	rotated := jsonReply(t, ok(t, "-o", "json", "call", "RackManager/UpdateSwitchSystemPassword", "-d",
		`{"username":"admin","password":"`+newPassword+`","nodes":`+nodes+`}`),
		func() *rmspb.UpdateSwitchSystemPasswordResponse { return &rmspb.UpdateSwitchSystemPasswordResponse{} })
	job := rotated.GetResponse().GetJobId()
	if job == "" {
		t.Fatalf("UpdateSwitchSystemPassword answered no job: %v", rotated)
	}
	if r := rmsctl(t, "jobs", "watch", job); r.code != 0 {
		t.Fatalf("jobs watch %s: exit %d\n%s%s", job, r.code, r.stdout, r.stderr)
	}
	failed := rmsctl(t, "power", "set", "--rack", rack, "--state", "on", missing)
	if failed.code != 1 {
		t.Fatalf("power set of an unknown node: exit %d, want 1", failed.code)
	}
	ok(t, "power", "get", "--rack", rack, "rack-001-compute-01")

	// The password update: its caller, ids, job and outcome.
	list := jsonReply(t, ok(t, "-o", "json", "audit", "list", "--node", sw, "--since", "1h"),
		func() *opspb.ListAuditRecordsResponse { return &opspb.ListAuditRecordsResponse{} })
	var pw *opspb.AuditRecord
	for _, r := range list.GetRecords() {
		if r.GetMethod() == "/rack_manager.RackManager/UpdateSwitchSystemPassword" && len(r.GetJobIds()) > 0 && r.GetJobIds()[0] == job {
			pw = r
		}
	}
	if pw == nil {
		t.Fatalf("no audit record of the password update (job %s) among %v", job, list.GetRecords())
	}
	if pw.GetOutcome() != "OK" || len(pw.GetRackIds()) != 1 || pw.GetRackIds()[0] != rack || len(pw.GetNodeIds()) != 1 ||
		!strings.HasPrefix(pw.GetCaller().GetDisplay(), "peer 127.0.0.1:") || pw.GetCaller().GetVerified() {
		t.Errorf("password update recorded as %v", pw)
	}

	// The in-band failure, in the text table, with its reason; no read.
	text := ok(t, "audit", "list", "--rack", rack, "--since", "1h")
	reason := "node " + missing + " not found in rack " + rack
	var sawFailure bool
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "RackManager/SetPowerState") && strings.Contains(line, missing) &&
			strings.Contains(line, "FAILURE") && strings.Contains(line, reason) {
			sawFailure = true
		}
		if strings.Contains(line, "GetPowerState") {
			t.Errorf("a read is in the audit log: %s", line)
		}
	}
	if !sawFailure || !strings.HasPrefix(text, "TIME") {
		t.Errorf("audit list has no FAILURE row of SetPowerState %s with its reason:\n%s", missing, text)
	}
	if got := ok(t, "audit", "list", "--node", missing, "--limit", "1"); strings.Count(strings.TrimSpace(got), "\n") != 1 {
		t.Errorf("--limit 1 printed:\n%s", got)
	}
	for _, secret := range secrets {
		if secret == "" {
			t.Fatal("the simulated switch has no password")
		}
		for where, out := range map[string]string{"audit list -o json": protojson.Format(list), "audit list": text, "rmsd's log and audit stream": daemonLog.String()} {
			if strings.Contains(out, secret) {
				t.Errorf("a password appears in %s", where)
			}
		}
	}
	if !strings.Contains(daemonLog.String(), `"stream":"audit"`) {
		t.Error("rmsd's log has no audit stream line")
	}

	// jobs list finds the rotation's job by each filter.
	for _, args := range [][]string{
		{"--type", "switch_system_password_update"},
		{"--type", "switch_system_password_update", "--state", "completed", "--rack", rack, "--since", "1h"},
	} {
		jobs := jsonReply(t, ok(t, append([]string{"-o", "json", "jobs", "list"}, args...)...),
			func() *opspb.ListJobsResponse { return &opspb.ListJobsResponse{} })
		var found bool
		for _, j := range jobs.GetJobs() {
			found = found || j.GetJobId() == job && j.GetState() == "completed" && j.GetType() == "switch_system_password_update"
			if j.GetType() != "switch_system_password_update" {
				t.Errorf("jobs list %v lists %v", args, j)
			}
		}
		if !found {
			t.Errorf("jobs list %v: the rotation's job %s is missing: %v", args, job, jobs)
		}
	}
	if out := ok(t, "jobs", "list", "--state", "completed"); !strings.HasPrefix(out, "JOB") || !strings.Contains(out, job) {
		t.Errorf("jobs list --state completed:\n%s", out)
	}
	if out := ok(t, "jobs", "list", "--since", "2000-01-01T00:00:00Z", "--state", "queued", "--type", "cold_reboot_sequence"); strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("jobs list of no job printed more than the header:\n%s", out)
	}

	// Bad flags are usage errors (2); a bad state is rmsd's INVALID_ARGUMENT.
	for _, args := range [][]string{{"audit", "list", "--since", "yesterday"}, {"jobs", "list", "--limit", "0"}} {
		if r := rmsctl(t, args...); r.code != 2 {
			t.Errorf("rmsctl %v: exit %d (%s), want 2", args, r.code, r.stderr)
		}
	}
	if r := rmsctl(t, "jobs", "list", "--state", "sleeping"); r.code == 0 || !strings.Contains(r.stderr, "want queued, running, completed or failed") {
		t.Errorf("jobs list --state sleeping: exit %d, stderr %q", r.code, r.stderr)
	}
}
