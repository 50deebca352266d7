package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// TestSimulateInstallsASwitchImage installs an NVOS image on two switches
// of `rmsd --simulate`, as a user would try it: the paced polls must see
// the simulated install hand off, the switch reboot and come back running
// the new build, with time_scale's durations and upstream's bounds.
func TestSimulateInstallsASwitchImage(t *testing.T) {
	dir := t.TempDir()
	firmwareDir := filepath.Join(dir, "firmware")
	if err := os.MkdirAll(firmwareDir, 0o750); err != nil {
		t.Fatal(err)
	}
	const image = "nvos-amd64-25.11.1042.bin"
	if err := os.WriteFile(filepath.Join(firmwareDir, image), []byte(strings.Repeat("N", 4096)), 0o600); err != nil {
		t.Fatal(err)
	}
	nodesFile := filepath.Join(dir, "nodes.json")
	cfg := writeFile(t, fmt.Sprintf(`
port = 0
[server]
drain_delay_seconds = 0
[simulator]
network = 95
time_scale = 0.003
bmc_port = 0
nvue_port = 0
nmx_port = 0
gnmi_port = 0
ssh_port = 0
nodes_file = %q
`, nodesFile))
	d := startRun(t, []string{"RMS_STORAGE__SQLITE_PATH=" + filepath.Join(dir, "rmsd.db"), "RMS_WORKFLOWS__FIRMWARE_DIR=" + firmwareDir},
		"--config", cfg, "--simulate")
	client := rmspb.NewRackManagerClient(d.conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var nodes rmspb.NodeSet
	readJSON(t, nodesFile, &nodes)
	switches := &rmspb.NodeSet{}
	for _, n := range nodes.GetNodes() {
		if strings.Contains(n.GetNodeId(), "switch") && len(switches.Nodes) < 2 {
			switches.Nodes = append(switches.Nodes, n)
		}
	}
	resp, err := client.UpdateSwitchSystemImage(ctx, &rmspb.UpdateSwitchSystemImageRequest{Nodes: switches, LocalFilePath: image})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetJobs()) != 2 {
		t.Fatalf("UpdateSwitchSystemImage: %v %v", resp, err)
	}
	var parent *rmspb.GetSwitchSystemImageJobStatusResponse
	pollUntil(t, ctx, "the image update to end", func() bool {
		parent, err = client.GetSwitchSystemImageJobStatus(ctx, &rmspb.GetSwitchSystemImageJobStatusRequest{JobId: resp.GetResponse().GetJobId()})
		return err == nil && (parent.GetState() == "completed" || parent.GetState() == "failed")
	})
	if parent.GetState() != "completed" {
		t.Fatalf("image update on the simulated rack: %s %s %s", parent.GetState(), parent.GetErrorMessage(), parent.GetResultJson())
	}
	for _, j := range resp.GetJobs() {
		st, err := client.GetSwitchSystemImageJobStatus(ctx, &rmspb.GetSwitchSystemImageJobStatusRequest{JobId: j.GetJobId()})
		var result struct {
			CurrentBuild string `json:"current_build"`
			NextBuild    string `json:"next_build"`
		}
		if err == nil {
			err = json.Unmarshal([]byte(st.GetResultJson()), &result)
		}
		if err != nil || result.CurrentBuild != "nvos-25.11.1042" || result.NextBuild != "nvos-25.11.1042" {
			t.Errorf("%s: current %q, next %q, want nvos-25.11.1042 on both (%v)", j.GetNodeId(), result.CurrentBuild, result.NextBuild, err)
		}
	}
}
