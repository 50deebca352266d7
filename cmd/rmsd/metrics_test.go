package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// scrape reads the daemon's /metrics and parses the text format.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return families
}

// sample returns the metric of family whose labels include want, or nil.
func sample(families map[string]*dto.MetricFamily, family string, want map[string]string) *dto.Metric {
	f := families[family]
	if f == nil {
		return nil
	}
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if match {
			return m
		}
	}
	return nil
}

// labelNames lists the label names of family's first metric.
func labelNames(families map[string]*dto.MetricFamily, family string) string {
	f := families[family]
	if f == nil || len(f.GetMetric()) == 0 {
		return ""
	}
	var names []string
	for _, l := range f.GetMetric()[0].GetLabel() {
		names = append(names, l.GetName())
	}
	return strings.Join(names, ",")
}

// TestMetricsOfARunningDaemon runs `rmsd --simulate` with [metrics] port 0,
// makes RPCs and a switch password job, and reads every family back from
// /metrics: the info gauges, the build info, the RPC histogram, the
// workflow counters, gauges and duration histogram, rmsd's own gauges and
// the process_* and go_* collectors. After shutdown the port is closed.
// Its JSON log lines carry timestamps, and health checks are not at info.
func TestMetricsOfARunningDaemon(t *testing.T) {
	nodesFile := filepath.Join(t.TempDir(), "nodes.json")
	d := startRun(t, nil, "--config", simulateConfig(t, 91, 0, nodesFile), "--simulate")
	addr, ok := logLine(t, d.stdout.String(), "metrics serving")["addr"].(string)
	if !ok {
		t.Fatal("no address in the metrics serving line")
	}
	client := rmspb.NewRackManagerClient(d.conn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := client.GetVersion(ctx, &rmspb.GetVersionRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := healthpb.NewHealthClient(d.conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
	var nodes rmspb.NodeSet
	readJSON(t, nodesFile, &nodes)
	if r, err := client.BatchGetPowerState(ctx, &rmspb.BatchGetPowerStateRequest{Nodes: &nodes}); err != nil ||
		r.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("BatchGetPowerState: %v %v", r.GetResponse(), err)
	}
	var sw *rmspb.NodeInfo
	for _, n := range nodes.GetNodes() {
		if strings.Contains(n.GetNodeId(), "switch") {
			sw = n
			break
		}
	}
	job, err := client.UpdateSwitchSystemPassword(ctx, &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{sw}}, Username: "admin", Password: "metrics-Test-9"})
	if err != nil || job.GetResponse().GetJobId() == "" {
		t.Fatalf("UpdateSwitchSystemPassword: %v %v", job.GetResponse(), err)
	}
	var parent *rmspb.JobStatus
	pollUntil(t, ctx, "the password job to end", func() bool {
		st, err := client.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: job.GetResponse().GetJobId()})
		if err != nil || len(st.GetJobStates()) == 0 {
			return false
		}
		parent = st.GetJobStates()[0]
		s := parent.GetExecutionState()
		return s == rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED || s == rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED
	})
	if parent.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED {
		t.Fatalf("password job: %v", parent)
	}

	m := scrape(t, addr)
	for family, want := range map[string]string{
		"rms_api_version":                           "build_date,build_version,git_sha,go_version",
		"rms_api_config":                            "firmware_dir,grpc_port,persistence_type,tls_mode",
		"rms_grpc_server_handling_seconds":          "code,method,service",
		"rms_workflows_counts_total":                "error_code,is_leaf,workflow_state,workflow_type",
		"rms_workflows_in_flight":                   "is_leaf,workflow_type",
		"rmsd_jobs_tracked":                         "",
		"rmsd_nodes_held":                           "",
		"rmsd_bmc_operations_in_flight":             "",
		"rmsd_bmc_operations_queued":                "",
		"rmsd_firmware_download_bytes_total":        "",
		"rmsd_registry_mailbox_depth":               "",
		"rmsd_audit_records_dropped_total":          "",
		"rmsd_simulator_overlaps_total":             "",
		"rmsd_build_info":                           "commit,goversion,version",
		"rmsd_job_duration_seconds":                 "is_leaf,outcome,workflow_type",
		"rmsd_journal_commit_seconds":               "outcome,store",
		"rmsd_hardware_request_seconds":             "device_kind,protocol",
		"rmsd_jobs_quarantined":                     "",
		"rmsd_drain_start_timestamp_seconds":        "",
		"rmsd_certificate_expiry_timestamp_seconds": "certificate",
		"process_cpu_seconds_total":                 "",
		"process_resident_memory_bytes":             "",
		"go_goroutines":                             "",
		"go_memstats_heap_alloc_bytes":              "",
	} {
		if m[family] == nil {
			t.Errorf("no %s family", family)
			continue
		}
		if got := labelNames(m, family); got != want {
			t.Errorf("%s labels = %q, want %q", family, got, want)
		}
	}
	if v := sample(m, "rms_api_config", map[string]string{"tls_mode": "insecure", "persistence_type": "sqlite", "grpc_port": "0"}); v.GetGauge().GetValue() != 1 {
		t.Errorf("rms_api_config = %v", m["rms_api_config"])
	}
	if v := sample(m, "rms_api_version", nil); v.GetGauge().GetValue() != 1 || !strings.HasPrefix(labelValue(v, "go_version"), "go") {
		t.Errorf("rms_api_version = %v", v)
	}
	rpc := func(method string) uint64 {
		return sample(m, "rms_grpc_server_handling_seconds", map[string]string{
			"service": "rack_manager.RackManager", "method": method, "code": "OK"}).GetHistogram().GetSampleCount()
	}
	for _, method := range []string{"GetVersion", "BatchGetPowerState", "UpdateSwitchSystemPassword", "GetJobStatus"} {
		if rpc(method) < 1 {
			t.Errorf("no %s in rms_grpc_server_handling_seconds", method)
		}
	}
	var bounds []float64
	for _, b := range sample(m, "rms_grpc_server_handling_seconds", map[string]string{"method": "GetVersion"}).GetHistogram().GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	if want := []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, math.Inf(1)}; !slices.Equal(bounds, want) {
		t.Errorf("buckets %v, want %v (sub-millisecond to ten minutes)", bounds, want)
	}
	if v := sample(m, "rmsd_build_info", nil); v.GetGauge().GetValue() != 1 || labelValue(v, "goversion") != runtime.Version() {
		t.Errorf("rmsd_build_info = %v", v)
	}
	const pw = "switch_system_password_update"
	for _, c := range []struct {
		leaf, state, code string
	}{
		{"false", "queued", "none"}, {"false", "completed", "none"},
		{"true", "queued", "none"}, {"true", "completed", "none"},
	} {
		v := sample(m, "rms_workflows_counts_total", map[string]string{"workflow_type": pw, "is_leaf": c.leaf, "workflow_state": c.state, "error_code": c.code})
		if v.GetCounter().GetValue() != 1 {
			t.Errorf("rms_workflows_counts_total{is_leaf=%s, %s, %s} = %v, want 1", c.leaf, c.state, c.code, v)
		}
	}
	for _, leaf := range []string{"true", "false"} {
		if v := sample(m, "rmsd_job_duration_seconds", map[string]string{"workflow_type": pw, "is_leaf": leaf, "outcome": "completed"}); v.GetHistogram().GetSampleCount() != 1 {
			t.Errorf("rmsd_job_duration_seconds{is_leaf=%s, completed} = %v, want one observation", leaf, v)
		}
		if v := sample(m, "rms_workflows_in_flight", map[string]string{"workflow_type": pw, "is_leaf": leaf}); v == nil || v.GetGauge().GetValue() != 0 {
			t.Errorf("rms_workflows_in_flight{is_leaf=%s} = %v, want 0", leaf, v)
		}
	}
	if v := sample(m, "rmsd_jobs_tracked", nil).GetGauge().GetValue(); v != 2 {
		t.Errorf("rmsd_jobs_tracked = %v, want the parent and its child", v)
	}
	if v := sample(m, "rmsd_nodes_held", nil).GetGauge().GetValue(); v != 0 {
		t.Errorf("rmsd_nodes_held = %v after the job", v)
	}
	// The password job's commits reached the SQLite journal; its NVUE
	// requests went to a switch, BatchGetPowerState's Redfish requests
	// to compute trays and power shelves.
	if v := sample(m, "rmsd_journal_commit_seconds", map[string]string{"store": "sqlite", "outcome": "ok"}); v.GetHistogram().GetSampleCount() < 1 {
		t.Errorf("rmsd_journal_commit_seconds{sqlite, ok} = %v, want the job's commits", v)
	}
	for _, c := range [][2]string{{"nvue", "switch"}, {"redfish", "compute"}, {"redfish", "power_shelf"}} {
		if v := sample(m, "rmsd_hardware_request_seconds", map[string]string{"protocol": c[0], "device_kind": c[1]}); v.GetHistogram().GetSampleCount() < 1 {
			t.Errorf("rmsd_hardware_request_seconds{%s, %s} = %v, want requests", c[0], c[1], v)
		}
	}
	if v := sample(m, "rmsd_jobs_quarantined", nil).GetGauge().GetValue(); v != 0 {
		t.Errorf("rmsd_jobs_quarantined = %v, want 0", v)
	}
	if v := sample(m, "rmsd_drain_start_timestamp_seconds", nil).GetGauge().GetValue(); v != 0 {
		t.Errorf("rmsd_drain_start_timestamp_seconds = %v before any shutdown, want 0", v)
	}
	// The simulation's switch identity, issued for the run.
	if v := sample(m, "rmsd_certificate_expiry_timestamp_seconds", map[string]string{"certificate": "switch_client"}); v == nil ||
		time.Unix(int64(v.GetGauge().GetValue()), 0).Before(time.Now()) {
		t.Errorf("rmsd_certificate_expiry_timestamp_seconds{switch_client} = %v, want a future expiry", v)
	}
	if v := sample(m, "rmsd_simulator_overlaps_total", nil).GetCounter().GetValue(); v != 0 {
		t.Errorf("rmsd_simulator_overlaps_total = %v, want 0", v)
	}

	logLine(t, d.stdout.String(), "rmsd serving") // every line is JSON
	for _, line := range strings.Split(strings.TrimSpace(d.stdout.String()), "\n") {
		var m map[string]any
		_ = json.Unmarshal([]byte(line), &m)
		if _, ok := m["time"]; !ok {
			t.Errorf("log line without a timestamp: %s", line)
			break
		}
		if m["rpc"] == healthpb.Health_Check_FullMethodName {
			t.Errorf("health check logged at %v, want debug (hidden at info): %s", m["level"], line)
		}
	}

	stopRun(t, d)
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Errorf("metrics port %s still open after shutdown", addr)
	}
}

// labelValue is the value of a metric's label name.
func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// TestMetricsPortInUseFailsTheStart: a taken [metrics] port stops the
// start with an error naming the metrics listener.
func TestMetricsPortInUseFailsTheStart(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	code := run(context.Background(), runOptions{
		Args:    []string{"--config", writeFile(t, insecureLoopback)},
		Environ: withStorage(t, []string{"RMS_ALLOW_INSECURE=1", fmt.Sprintf("RMS_METRICS__PORT=%d", port)}),
		Stdout:  stdout, Stderr: stderr,
	})
	if want := fmt.Sprintf("metrics: listen on 127.0.0.1:%d", port); code != 1 || !strings.Contains(stderr.String(), want) {
		t.Fatalf("exit %d, stderr %q; want 1 and %q", code, stderr.String(), want)
	}
}
