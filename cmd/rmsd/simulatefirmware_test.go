package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/store/storetest"
)

// TestSimulateRunsTheWholeFirmwareFlowOffline is the main caller's flow on
// `rmsd --simulate`, as the README tells a user to try it: add the release
// the simulator publishes (the request it writes beside the nodes file),
// wait until it is available, apply it to every node of the simulated rack,
// poll the parent until it completes, and compare the new versions with the
// release. Then rmsd restarts on the same store: the object is still
// available and the apply is in the history. Once on SQLite, once on
// PostgreSQL.
func TestSimulateRunsTheWholeFirmwareFlowOffline(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		simulateFirmwareFlow(t, []string{"RMS_STORAGE__SQLITE_PATH=" + filepath.Join(t.TempDir(), "rmsd.db")}, 91)
	})
	t.Run("postgres", func(t *testing.T) {
		simulateFirmwareFlow(t, []string{"DATABASE_URL=" + storetest.TempPostgresDatabase(t)}, 89)
	})
}

// simulateFirmwareFlow runs the flow at the default time scale, 0.01: a
// power shelf's reboot lasts 0.45 s of wall-clock time, long enough for the
// activation to see it on a loaded machine (a few milliseconds may pass
// unseen, and the job would then wait its whole reboot timeout).
func simulateFirmwareFlow(t *testing.T, environ []string, network int) {
	dir := t.TempDir()
	nodesFile := filepath.Join(dir, "nodes.json")
	cfg := writeFile(t, fmt.Sprintf(`
port = 0
[server]
drain_delay_seconds = 0
[workflows]
firmware_dir = %q
[simulator]
network = %d
time_scale = 0.01
bmc_port = 0
nvue_port = 0
nmx_port = 0
gnmi_port = 0
ssh_port = 0
nodes_file = %q
`, filepath.Join(dir, "firmware"), network, nodesFile))
	d := startRun(t, environ, "--config", cfg, "--simulate")
	client := rmspb.NewRackManagerClient(d.conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var add rmspb.AddFirmwareObjectRequest
	readJSON(t, filepath.Join(dir, "simulated-release.json"), &add)
	added, err := client.AddFirmwareObject(ctx, &add)
	if err != nil {
		t.Fatalf("AddFirmwareObject with the simulated release: %v", err)
	}
	id := added.GetObject().GetId()
	pollUntil(t, ctx, "release "+id+" available", func() bool {
		obj, err := client.GetFirmwareObject(ctx, &rmspb.GetFirmwareObjectRequest{Id: id})
		return err == nil && obj.GetObject().GetAvailable()
	})

	var nodes rmspb.NodeSet
	readJSON(t, nodesFile, &nodes)
	resp, err := client.ApplyStoredFirmwareObject(ctx, &rmspb.ApplyStoredFirmwareObjectRequest{
		HardwareType: add.GetHardwareType(), Nodes: &nodes})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetJobs()) != len(nodes.GetNodes()) {
		t.Fatalf("ApplyStoredFirmwareObject: %v %v", resp, err)
	}
	var parent *rmspb.GetFirmwareJobStatusResponse
	pollUntil(t, ctx, "the apply to end", func() bool {
		parent, err = client.GetFirmwareJobStatus(ctx, &rmspb.GetFirmwareJobStatusRequest{JobId: resp.GetResponse().GetJobId()})
		st := parent.GetJobState()
		return err == nil && (st == rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED || st == rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED)
	})
	if parent.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Fatalf("apply to the simulated rack: %v %s %s", parent.GetJobState(), parent.GetErrorMessage(), parent.GetResultJson())
	}

	// Every compute tray now runs the release's BMC and HMC.
	cmp, err := client.CompareFirmwareObject(ctx, &rmspb.CompareFirmwareObjectRequest{ConfigJson: add.GetConfigJson(), Nodes: &nodes,
		ComponentFilters: map[int32]*rmspb.FirmwareObjectComponentFilter{
			int32(rmspb.NodeType_COMPUTE_GB200_NVIDIA): {Components: []string{"BMC", "HMC"}}}})
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, n := range cmp.GetNodes() {
		if n.GetMatchesManifest() {
			matched++
		}
	}
	if matched != 18 {
		t.Errorf("%d compute trays match the release's BMC and HMC after the apply, want 18: %v", matched, cmp.GetResponse().GetMessage())
	}

	// A restart on the same store keeps the object and the history.
	stopRun(t, d)
	d = startRun(t, environ, "--config", cfg, "--simulate")
	client = rmspb.NewRackManagerClient(d.conn)
	obj, err := client.GetFirmwareObject(ctx, &rmspb.GetFirmwareObjectRequest{Id: id})
	if err != nil || !obj.GetObject().GetAvailable() || !obj.GetObject().GetIsDefault() {
		t.Errorf("after a restart the release is %v (%v), want available and the default", obj.GetObject(), err)
	}
	hist, err := client.GetFirmwareObjectHistory(ctx, &rmspb.GetFirmwareObjectHistoryRequest{ObjectId: id})
	if err != nil || len(hist.GetRecords()) != 1 {
		t.Fatalf("history after a restart: %v %v", hist, err)
	}
	if rec := hist.GetRecords()[0]; len(rec.GetNodeIds()) != len(nodes.GetNodes()) || !rec.GetFirmwareAvailable() || rec.GetHardwareType() != add.GetHardwareType() {
		t.Errorf("history record after a restart: %v", rec)
	}
}

// readJSON decodes a protobuf JSON file the daemon wrote.
func readJSON(t *testing.T, path string, into proto.Message) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := protojson.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// pollUntil checks cond every 20 ms until it holds or ctx ends.
func pollUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
