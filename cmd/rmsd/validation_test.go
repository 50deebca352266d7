package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// TestSimulateRunsSystemValidationWithItsStandIn: `rmsd --simulate` with
// no nvssvt_path scans a node of the nodes file with the stand-in it
// re-executes itself as, to a parsed report.
func TestSimulateRunsSystemValidationWithItsStandIn(t *testing.T) {
	dir := t.TempDir()
	nodesFile := filepath.Join(dir, "nodes.json")
	logDir := filepath.Join(dir, "nvssvt")
	d := startRun(t, []string{"RMS_WORKFLOWS__NVSSVT_LOG_DIR=" + logDir}, "--config", simulateConfig(t, 139, 0, nodesFile), "--simulate")
	var set rmspb.NodeSet
	readJSON(t, nodesFile, &set)
	var compute *rmspb.NodeInfo
	for _, n := range set.GetNodes() {
		if strings.Contains(n.GetNodeId(), "compute") {
			compute = n
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := rmspbv2.NewRackManagerV2Client(d.conn).StartSystemValidation(ctx,
		&rmspbv2.StartSystemValidationRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{compute}}})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetJobs()) != 1 {
		t.Fatalf("StartSystemValidation = %v, %v", resp, err)
	}
	client := rmspb.NewRackManagerClient(d.conn)
	var job *rmspb.JobStatus
	pollUntil(t, ctx, "the scan to end", func() bool {
		st, err := client.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: resp.GetJobs()[0].GetJobId()})
		if err != nil {
			t.Fatal(err)
		}
		job = st.GetJobStates()[0]
		return job.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED ||
			job.GetExecutionState() == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED
	})
	var res struct {
		Validation string `json:"validation"`
		LogDir     string `json:"log_dir"`
		DUTs       []struct {
			ID string `json:"id"`
		} `json:"duts"`
	}
	if err := json.Unmarshal([]byte(job.GetResultJson()), &res); err != nil {
		t.Fatal(err)
	}
	if job.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED || res.Validation != "PASS" ||
		len(res.DUTs) != 1 || res.DUTs[0].ID != compute.GetNodeId() || filepath.Dir(res.LogDir) != logDir {
		t.Fatalf("scan %v", job)
	}
	if !strings.Contains(d.stdout.String(), "built-in NVSSVT stand-in") {
		t.Error("the stand-in is not logged")
	}
	stopRun(t, d)
}

func TestAnNVSSVTPathThatIsNoExecutableStopsTheStart(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "nvssvt")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(t.TempDir(), "absent"): "no such file or directory",
		notExec:                              "is not an executable file",
	} {
		var stderr lockedBuffer
		code := run(context.Background(), runOptions{
			Args:    []string{"--config", writeFile(t, insecureLoopback)},
			Environ: withStorage(t, []string{"RMS_ALLOW_INSECURE=1", "RMS_WORKFLOWS__NVSSVT_PATH=" + path}),
			Stdout:  &lockedBuffer{}, Stderr: &stderr,
		})
		if code != 1 || !strings.Contains(stderr.String(), "workflows.nvssvt_path") || !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: code %d, stderr %q", path, code, stderr.String())
		}
	}
}
