package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
)

// ephemeralCaches lists the temporary firmware caches of the daemon whose
// firmware_dir is dir/firmware.
func ephemeralCaches(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, "firmware", "ephemeral"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return entries
}

// rmsd killed while an ApplyFirmwareObject child waits in stage 0 for a
// package the artifact server holds: after the restart the child reads
// Failed with the interruption reason naming stage 0 (it never hangs), its
// parent is terminal, the node is free and the temporary cache is gone.
func TestKill9DuringAnApplyDownloadInterruptsItAndRemovesTheCache(t *testing.T) {
	art, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(art.Close)
	rel, err := simrelease.Publish(art, simrelease.Options{Size: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	art.SetFault(rel.ComputeBMC.Path, artifactsim.Fault{Hold: true})

	dir := t.TempDir()
	env := append(append([]string{}, insecureEnv...), "RMS_STORAGE__SQLITE_PATH="+filepath.Join(dir, "rmsd.db"))
	cfg := simulation(t, dir, 73)
	d := startDaemonIn(t, dir, env, "--config", cfg, "--simulate")
	client := dial(t, d)
	var tray *rmspb.NodeInfo
	for _, n := range simulatedNodes(t, dir).GetNodes() {
		if n.GetType() == rmspb.NodeType_COMPUTE_GB200_NVIDIA {
			tray = n
			break
		}
	}
	if tray == nil {
		t.Fatal("no simulated GB200 compute tray")
	}
	req := &rmspb.ApplyFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{tray}}}
	resp, err := client.ApplyFirmwareObject(rpc(t), req)
	if err != nil || len(resp.GetJobs()) != 1 || resp.GetResponse().GetJobId() == "" {
		t.Fatalf("ApplyFirmwareObject: %v %v", resp, err)
	}
	parent, child := resp.GetResponse().GetJobId(), resp.GetJobs()[0].GetJobId()
	reads := rpc(t) // one deadline for the wait
	for {
		s, err := client.GetFirmwareJobStatus(reads, &rmspb.GetFirmwareJobStatusRequest{JobId: child})
		if err != nil {
			t.Fatalf("child %s: %v", child, err)
		}
		if s.GetJobState() == rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_RUNNING && strings.HasPrefix(s.GetStateDescription(), "Stage 0: ") && art.Held() > 0 {
			break
		}
		if s.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_QUEUED && s.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_RUNNING {
			t.Fatalf("child left stage 0 while its package is held: %v %q", s.GetJobState(), s.GetErrorMessage())
		}
		select {
		case <-reads.Done():
			t.Fatal("the child never reached stage 0 with its download held")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if n := len(ephemeralCaches(t, dir)); n != 1 {
		t.Fatalf("%d temporary caches during the download, want 1", n)
	}
	kill9(t, d)

	d = startDaemonIn(t, dir, env, "--config", cfg, "--simulate")
	client = dial(t, d)
	s, err := client.GetFirmwareJobStatus(rpc(t), &rmspb.GetFirmwareJobStatusRequest{JobId: child})
	if err != nil {
		t.Fatal(err)
	}
	if s.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED ||
		!strings.HasPrefix(s.GetErrorMessage(), interrupted+`"Stage 0: downloading firmware artifacts (`) {
		t.Errorf("child after kill -9: %v %q", s.GetJobState(), s.GetErrorMessage())
	}
	p, err := client.GetFirmwareJobStatus(rpc(t), &rmspb.GetFirmwareJobStatusRequest{JobId: parent})
	if err != nil || p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED {
		t.Errorf("parent after kill -9: %v %v", p, err)
	}
	if n := len(ephemeralCaches(t, dir)); n != 0 {
		t.Errorf("%d temporary caches left after the restart", n)
	}
	// The node is free: the same apply is admitted again.
	art.SetFault(rel.ComputeBMC.Path, artifactsim.Fault{})
	again, err := client.ApplyFirmwareObject(rpc(t), req)
	if err != nil || len(again.GetJobs()) != 1 {
		t.Fatalf("the same apply after the restart: %v %v", again, err)
	}
	stopDaemon(t, d)
}
