package rmsserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvssvt"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/nvssvtsim"
)

// validationRack is a simulated rack whose server runs this test binary as
// the NVSSVT stand-in (see TestMain), as `rmsd --simulate` runs itself.
type validationRack struct {
	*simRack
	v2     rmspbv2.RackManagerV2Client
	runner *nvssvt.Runner
}

func startValidationRack(t *testing.T, tune func(*nvssvt.Config)) *validationRack {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := nvssvt.Config{Path: exe, Args: []string{nvssvtsim.Command}, LogRoot: t.TempDir(), Timeout: 2 * time.Minute,
		TermGrace: time.Second}
	if tune != nil {
		tune(&cfg)
	}
	runner := nvssvt.New(cfg)
	s := startSimRackDeps(t, sim.Options{TimeScale: 0.001, NoSwitchHosts: true}, func(d *Deps) { d.Validation = runner })
	return &validationRack{simRack: s, v2: rmspbv2.NewRackManagerV2Client(s.conn), runner: runner}
}

func (s *validationRack) start(t *testing.T, req *rmspbv2.StartSystemValidationRequest) *rmspbv2.StartSystemValidationResponse {
	t.Helper()
	resp, err := s.v2.StartSystemValidation(rpcContext(t), req)
	if err != nil {
		t.Fatalf("StartSystemValidation: %v", err)
	}
	return resp
}

// scanResult is what the tests read of a scan job's result_json.
type scanResult struct {
	Status       string         `json:"status"`
	NodeID       string         `json:"node_id"`
	LogDir       string         `json:"log_dir"`
	ExitCode     int            `json:"exit_code"`
	Validation   string         `json:"validation"`
	Summary      nvssvt.Summary `json:"summary"`
	DUTs         []nvssvt.DUT   `json:"duts"`
	ErrorCode    string         `json:"error_code"`
	ErrorMessage string         `json:"error_message"`
}

func (s *validationRack) scan(t *testing.T, id string) (*rmspb.JobStatus, scanResult) {
	t.Helper()
	st := s.jobStatus(t, id)
	var r scanResult
	if err := json.Unmarshal([]byte(st.GetResultJson()), &r); err != nil {
		t.Fatalf("job %s result_json %q: %v", id, st.GetResultJson(), err)
	}
	return st, r
}

func (s *validationRack) wait(t *testing.T, ids ...string) {
	t.Helper()
	if err := s.engine.Wait(waitContext(t), ids...); err != nil {
		t.Fatalf("jobs %v did not end: %v", ids, err)
	}
}

func TestStartSystemValidationScansEachNode(t *testing.T) {
	s := startValidationRack(t, nil)
	compute := s.ofKind(hw.KindCompute)
	shelf := s.ofKind(hw.KindPowerShelf)[0]
	noCreds := compute[2]
	bmc := *noCreds.BMC
	bmc.Credentials = hw.Credentials{}
	noCreds.BMC = &bmc
	override := `{"skip": ["chassis"], "note": "passed through; untouched"}`
	resp := s.start(t, &rmspbv2.StartSystemValidationRequest{
		Nodes: nodeSet(compute[0], noCreds, shelf, compute[1], compute[0]), ConfigOverride: override})

	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetJobId() == "" || len(r.GetNodeResults()) != 5 ||
		r.GetStats().GetSuccessfulNodes() != 3 || r.GetStats().GetFailedNodes() != 2 {
		t.Fatalf("response %v", r)
	}
	if !strings.HasPrefix(r.GetMessage(), "Started 3 of 5 system validation scans; failed: ") {
		t.Errorf("message %q", r.GetMessage())
	}
	for i, want := range []string{"", "bmc_endpoint needs a username and password", "", "", "duplicate target"} {
		nr := r.GetNodeResults()[i]
		if (want == "") != (nr.GetStatus() == rmspb.ReturnCode_RETURN_CODE_SUCCESS) || !strings.Contains(nr.GetErrorMessage(), want) {
			t.Errorf("node result %d: %v, want %q", i, nr, want)
		}
	}
	jobs := resp.GetJobs()
	if len(jobs) != 3 || jobs[0].GetNodeId() != compute[0].ID || jobs[1].GetNodeId() != shelf.ID || jobs[2].GetNodeId() != compute[1].ID {
		t.Fatalf("jobs %v", jobs)
	}
	ids := []string{r.GetJobId()}
	for _, j := range jobs {
		ids = append(ids, j.GetJobId())
	}
	s.wait(t, ids...)

	for _, j := range jobs {
		st, res := s.scan(t, j.GetJobId())
		if st.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED ||
			st.GetParentJobId() != r.GetJobId() || st.GetNodeId() != j.GetNodeId() {
			t.Fatalf("scan of %s: %v", j.GetNodeId(), st)
		}
		if res.Status != "completed" || res.Validation != nvssvt.StatusPass || res.NodeID != j.GetNodeId() ||
			len(res.DUTs) != 1 || res.DUTs[0].ID != j.GetNodeId() || res.Summary.Total != 5 || res.Summary.Skipped < 1 {
			t.Errorf("scan of %s: result %+v", j.GetNodeId(), res)
		}
		if res.LogDir != s.runner.LogDir(j.GetJobId()) {
			t.Errorf("log dir %q", res.LogDir)
		}
		// The stand-in was given the override, verbatim, as one argument.
		var argv []string
		b, err := os.ReadFile(filepath.Join(res.LogDir, "argv.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &argv); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(argv, "\x00"), "--config-override\x00"+override) {
			t.Errorf("argv %q", argv)
		}
	}
	if st := s.jobStatus(t, r.GetJobId()); st.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED ||
		st.GetStateDescription() != "All 3 system validation scans completed successfully" {
		t.Errorf("parent %v", st)
	}
}

func TestStartSystemValidationFailsTheScanOfAnUnreachableBMC(t *testing.T) {
	s := startValidationRack(t, nil)
	compute := s.ofKind(hw.KindCompute)
	if err := s.device(t, compute[1].ID).SetUnreachable(true); err != nil {
		t.Fatal(err)
	}
	resp := s.start(t, &rmspbv2.StartSystemValidationRequest{Nodes: nodeSet(compute[0], compute[1])})
	if resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetJobs()) != 2 {
		t.Fatalf("response %v", resp)
	}
	s.wait(t, resp.GetResponse().GetJobId(), resp.GetJobs()[0].GetJobId(), resp.GetJobs()[1].GetJobId())

	if st, _ := s.scan(t, resp.GetJobs()[0].GetJobId()); st.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED {
		t.Errorf("the reachable node's scan: %v", st)
	}
	st, res := s.scan(t, resp.GetJobs()[1].GetJobId())
	if st.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED ||
		!strings.Contains(st.GetErrorMessage(), "redfish_service_root: GET /redfish/v1") {
		t.Fatalf("the unreachable node's scan: %v", st)
	}
	if res.Status != "failed" || res.Validation != nvssvt.StatusFail || res.ExitCode != nvssvt.ExitChecksFailed || len(res.DUTs) != 1 {
		t.Errorf("result %+v", res)
	}
	if p := s.jobStatus(t, resp.GetResponse().GetJobId()); p.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED ||
		!strings.Contains(p.GetErrorMessage(), "1 of 2 system validation scans failed") {
		t.Errorf("parent %v", p)
	}
}

// inFlightScan starts the scan of one compute node whose BMC answers
// nothing for an hour: the stand-in's first request hangs (its own bound
// is longer), so the scan is in flight until it is cancelled or its run
// limit passes. It returns the scan's job id and the parent's.
func (s *validationRack) inFlightScan(t *testing.T) (scan, parent string) {
	t.Helper()
	node := s.ofKind(hw.KindCompute)[0]
	s.device(t, node.ID).SetLatency(time.Hour)
	resp := s.start(t, &rmspbv2.StartSystemValidationRequest{Nodes: nodeSet(node)})
	if len(resp.GetJobs()) != 1 {
		t.Fatalf("response %v", resp)
	}
	return resp.GetJobs()[0].GetJobId(), resp.GetResponse().GetJobId()
}

// hangingStandIn makes the stand-in's Redfish requests outlast any test.
func hangingStandIn(c *nvssvt.Config) { c.Args = append(c.Args, "--request-timeout", "1h") }

func TestStartSystemValidationCancelLeavesNoProcess(t *testing.T) {
	// A run limit far beyond the test's waits: only the cancel ends the scan.
	s := startValidationRack(t, func(c *nvssvt.Config) { hangingStandIn(c); c.Timeout = time.Hour })
	id, parent := s.inFlightScan(t)
	dir := s.runner.LogDir(id)
	eventuallyRPC(t, "the scan's process", func() bool { return len(processesNaming(dir)) > 0 })
	if _, err := s.engine.Cancel(rpcContext(t), id); err != nil {
		t.Fatal(err)
	}
	s.wait(t, id, parent)
	if st := s.jobStatus(t, id); st.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED ||
		!strings.Contains(st.GetErrorMessage(), "cancelled") {
		t.Errorf("cancelled scan: %v", st)
	}
	eventuallyRPC(t, "no process of "+dir, func() bool { return len(processesNaming(dir)) == 0 })
}

func TestStartSystemValidationTimeoutLeavesNoProcess(t *testing.T) {
	s := startValidationRack(t, func(c *nvssvt.Config) { hangingStandIn(c); c.Timeout = 5 * time.Second })
	id, parent := s.inFlightScan(t)
	s.wait(t, id, parent)
	st := s.jobStatus(t, id)
	if st.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED || st.GetErrorCode() != rmspb.JobError_JOB_ERROR_TIMEOUT ||
		!strings.Contains(st.GetErrorMessage(), "nvssvt run timed out after 5s and was killed") {
		t.Errorf("timed-out scan: %v", st)
	}
	dir := s.runner.LogDir(id)
	eventuallyRPC(t, "no process of "+dir, func() bool { return len(processesNaming(dir)) == 0 })
}

func TestStartSystemValidationRefusals(t *testing.T) {
	s := startValidationRack(t, nil)
	node := s.ofKind(hw.KindCompute)[0]

	resp := s.start(t, &rmspbv2.StartSystemValidationRequest{})
	if r := resp.GetResponse(); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetMessage() != "No nodes specified in request" {
		t.Errorf("no nodes: %v", r)
	}
	for _, override := range []string{"a\x00b", strings.Repeat("x", 64<<10+1)} {
		_, err := s.v2.StartSystemValidation(rpcContext(t), &rmspbv2.StartSystemValidationRequest{Nodes: nodeSet(node), ConfigOverride: override})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "config_override") {
			t.Errorf("override of %d bytes: %v", len(override), err)
		}
	}
	noBMC := node
	noBMC.BMC = nil
	resp = s.start(t, &rmspbv2.StartSystemValidationRequest{Nodes: nodeSet(noBMC)})
	if r := resp.GetResponse(); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(resp.GetJobs()) != 0 ||
		!strings.Contains(r.GetNodeResults()[0].GetErrorMessage(), "node has no bmc_endpoint") {
		t.Errorf("no BMC: %v", resp)
	}
	if p := s.jobStatus(t, resp.GetResponse().GetJobId()); p.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
		t.Errorf("a parent without children: %v", p)
	}
}

func TestStartSystemValidationWithoutNVSSVTIsRefusedInBand(t *testing.T) {
	s := startSimRack(t)
	resp, err := rmspbv2.NewRackManagerV2Client(s.conn).StartSystemValidation(rpcContext(t),
		&rmspbv2.StartSystemValidationRequest{Nodes: nodeSet(s.nodes[0], s.nodes[1])})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	const want = "No system validation scan was started: system validation is not configured: set [workflows] nvssvt_path"
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetMessage() != want || r.GetJobId() != "" ||
		len(resp.GetJobs()) != 0 || r.GetStats().GetFailedNodes() != 2 {
		t.Errorf("response %v", resp)
	}
}

// processesNaming lists the pids of live processes whose command line
// contains s (a scan's log directory names its job id).
func processesNaming(s string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), s) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && (f[0] == "Z" || f[0] == "X") {
				continue // exited, not yet reaped by its new parent
			}
		}
		out = append(out, e.Name())
	}
	return out
}
