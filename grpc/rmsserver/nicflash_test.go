package rmsserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/nicflash"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/hostsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// nicRack is a simulated rack whose compute trays run a host OS with
// ConnectX-7 and BlueField-3 adapters, registered with their host
// endpoints (login ubuntu, a sudoer), served with a Flint flasher.
type nicRack struct {
	*simRack
	dir     string // firmware_dir
	art     *artifactsim.Server
	release simrelease.Release
}

func startNICRack(t *testing.T) *nicRack {
	t.Helper()
	const outage = 1000 * time.Second // × 0.001: a reboot the activation must see
	logs := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("simulator log:\n%s", logs.String())
		}
	})
	s := startSimRackWith(t, sim.Options{TimeScale: 0.001, ComputeHosts: true, Logger: zerolog.New(logs),
		Layout: sim.Layout{Compute: 2, Switches: 1, Shelves: 1},
		Timing: sim.Timing{BMCReboot: outage, ShelfReboot: outage, NVOSReboot: outage}})
	f := &nicRack{simRack: s, dir: t.TempDir()}
	s.runner = fastRunner(t, s.fleet)
	art, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(art.Close)
	f.art = art
	if f.release, err = simrelease.Publish(art, simrelease.Options{Size: 4 << 10}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), catalogWait)
	defer cancel()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "rmsd.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dl := download.New(download.Options{SourceRoot: f.dir, AllowInsecureToken: true, Logger: zerolog.Nop()})
	cat, err := catalog.Open(ctx, catalog.Options{Store: st, Downloader: dl, Dir: f.dir, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cat.Close()
		dl.Close()
		_ = st.Close()
	})
	flasher := &nicflash.Flasher{SSH: sshsftp.Options{HostKey: sshsftp.AcceptAnyHostKey()},
		ReadyTimeout: firmwareWait, ReadyInterval: 10 * time.Millisecond}
	ts := startServer(t, Options{Logger: zerolog.Nop(), Deps: Deps{Racks: s.racks, Nodes: s.runner, Jobs: s.engine, Catalog: cat,
		FirmwareDir: f.dir, FirmwareTiming: fastFirmwareTiming, NICFlasher: flasher,
		InventoryProfiles: map[string][]string{"two-cx7": nil, "gb200-nics": nil},
		FlintProfiles: map[string]nicflash.Counts{"two-cx7": {nicflash.CX7: 2},
			"gb200-nics": {nicflash.CX7: 4, nicflash.CX8: 0, nicflash.BF3NIC: 1}}}})
	s.client = rmspb.NewRackManagerClient(dial(t, ts.addr, nil))
	return f
}

// stageImage writes a simulated Flint image into firmware_dir.
func (f *nicRack) stageImage(t *testing.T, name, psid, version string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), hostsim.Image(psid, version), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

func (f *nicRack) waitJob(t *testing.T, id string) *rmspb.GetFirmwareJobStatusResponse {
	t.Helper()
	var last *rmspb.GetFirmwareJobStatusResponse
	eventuallyRPC(t, "job "+id+" terminal", func() bool {
		resp, err := f.client.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: id})
		if err != nil {
			t.Fatalf("GetFirmwareJobStatus: %v", err)
		}
		last = resp
		st := resp.GetJobState()
		return st == rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED || st == rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED
	})
	return last
}

func TestUpdateFirmware_FlashesCX7AndBF3OverTheHostAndRunsThemAfterThePowerCycle(t *testing.T) {
	f := startNICRack(t)
	n := f.ofKind(hw.KindCompute)[0]
	host := f.device(t, n.ID).ComputeHost()
	cx7 := f.stageImage(t, "fw-ConnectX7-rel-28_41_1000.bin", "MT_0000000838", "28.41.1000")
	bf3 := f.stageImage(t, "fw-BlueField-3-rel-32_41_1000.bin", "MT_0000001093", "32.41.1000")
	resp, err := f.client.UpdateFirmware(rpcContext(t), &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Activate: true,
		FirmwareTargets: []*rmspb.FirmwareTarget{{Target: "CX7", Filename: cx7}, {Target: "BF3_NIC", Filename: bf3}}})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || resp.GetJobId() == "" {
		t.Fatalf("UpdateFirmware: %v %v", resp, err)
	}
	job := f.waitJob(t, resp.GetJobId())
	if job.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Fatalf("job %v: %s\n%s", job.GetJobState(), job.GetErrorMessage(), job.GetResultJson())
	}
	var doc struct {
		Targets                    []struct{ Component, Status string }
		Activated                  bool   `json:"activated"`
		PostActivationVersionCheck string `json:"post_activation_version_check"`
	}
	if err := json.Unmarshal([]byte(job.GetResultJson()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Targets) != 2 || doc.Targets[0].Status != "completed" || doc.Targets[1].Status != "completed" ||
		!doc.Activated || doc.PostActivationVersionCheck != "passed" {
		t.Errorf("result_json %s: want both targets completed, activated and the versions checked", job.GetResultJson())
	}
	for _, d := range host.Devices() {
		want := "28.41.1000"
		if d.Family == hostsim.BlueField3 {
			want = "32.41.1000"
		}
		if d.Running != want {
			t.Errorf("%s (%s) runs %s, want %s", d.Path, d.Family, d.Running, want)
		}
	}
	if resets := strings.Join(f.device(t, n.ID).Resets(), ","); !strings.Contains(resets, "AuxPowerCycle") {
		t.Errorf("resets %s: the tray was not power cycled", resets)
	}
	// The other tray was left alone.
	other := f.device(t, f.ofKind(hw.KindCompute)[1].ID).ComputeHost()
	if burns := other.Burns(); len(burns) != 0 {
		t.Errorf("the other tray was flashed: %v", burns)
	}

	// Again: every device already runs its image, nothing is burned.
	burns := len(host.Burns())
	resp, err = f.client.UpdateFirmware(rpcContext(t), &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Activate: true,
		Target: "CX7", Filename: cx7})
	if err != nil || resp.GetJobId() == "" {
		t.Fatalf("UpdateFirmware again: %v %v", resp, err)
	}
	job = f.waitJob(t, resp.GetJobId())
	if job.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED || !strings.Contains(job.GetResultJson(), `"status":"already_up_to_date"`) {
		t.Errorf("second update: %v %s", job.GetJobState(), job.GetResultJson())
	}
	if len(host.Burns()) != burns {
		t.Errorf("the second update burned again: %v", host.Burns())
	}
}

func TestUpdateFirmware_InBandImageNoAdapterFitsFailsBeforeAnyBurn(t *testing.T) {
	f := startNICRack(t)
	n := f.ofKind(hw.KindCompute)[0]
	img := f.stageImage(t, "fw-ConnectX7-other.bin", "MT_0000000999", "28.41.1000")
	resp, err := f.client.UpdateFirmware(rpcContext(t), &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Activate: true,
		Target: "CX7", Filename: img})
	if err != nil || resp.GetJobId() == "" {
		t.Fatalf("UpdateFirmware: %v %v", resp, err)
	}
	job := f.waitJob(t, resp.GetJobId())
	if job.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED ||
		!strings.Contains(job.GetErrorMessage(), "no image fits device") || !strings.Contains(job.GetErrorMessage(), "PSID MT_0000000838") {
		t.Fatalf("job %v %v: %s\n%s", job.GetJobState(), job.GetErrorCode(), job.GetErrorMessage(), job.GetResultJson())
	}
	if !strings.Contains(job.GetResultJson(), `"error_code":"FailedPrecondition"`) || !strings.Contains(job.GetResultJson(), `"phase":"update"`) {
		t.Errorf("result_json %s: want a FailedPrecondition in phase update", job.GetResultJson())
	}
	if burns := f.device(t, n.ID).ComputeHost().Burns(); len(burns) != 0 {
		t.Errorf("burned %v", burns)
	}
}

func TestUpdateFirmware_RefusesInBandTargetsItCannotFlash(t *testing.T) {
	f := startNICRack(t)
	n := f.ofKind(hw.KindCompute)[0]
	sw := f.ofKind(hw.KindSwitch)[0]
	img := f.stageImage(t, "fw-ConnectX7.bin", "MT_0000000838", "28.41.1000")
	bfb := f.stageImage(t, "bf-bundle.bin", "MT_0000001093", "4.9.0")
	cases := []struct {
		name string
		req  *rmspb.UpdateFirmwareRequest
		says string
	}{
		{"mixed with out-of-band", &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID,
			FirmwareTargets: []*rmspb.FirmwareTarget{{Target: "CX7", Filename: img}, {Target: "FW_BMC_0", Filename: img}}}, "in one request"},
		{"BF3 BFB bundle", &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Target: "BF3_BFB", Filename: bfb}, "rshim"},
		{"switch", &rmspb.UpdateFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID, Target: "CX7", Filename: img}, "compute nodes"},
	}
	for _, c := range cases {
		resp, err := f.client.UpdateFirmware(rpcContext(t), c.req)
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetJobId() != "" ||
			resp.GetErrorCode() != rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE || !strings.Contains(resp.GetMessage(), c.says) {
			t.Errorf("%s: %v %v, want CLIENT_FAILURE saying %q", c.name, resp, err, c.says)
		}
	}
}

func TestApplyFirmwareObject_FlashesTheOptedInCX7BeforeTheHMC(t *testing.T) {
	f := startNICRack(t)
	n := f.ofKind(hw.KindCompute)[0]
	host := f.device(t, n.ID).ComputeHost()
	// The release's CX7 entry, given a downloadable image of the trays' PSID.
	img := f.art.Publish("artifactory/nic/fw-ConnectX7-rel-28_44_1036.bin", hostsim.Image("MT_0000000838", "28.44.1036"))
	loc, err := json.Marshal(map[string]any{"Location": img.URL, "LocationType": "HTTPS", "FileName": img.Name, "Type": "Firmware", "Sha256": img.Sha256})
	if err != nil {
		t.Fatal(err)
	}
	null := `{"Location": null, "LocationType": null, "FileName": "fw-ConnectX7-rel-28_44_1036.bin", "Type": "Firmware", "Sha256": null}`
	if !strings.Contains(f.release.ConfigJSON, null) {
		t.Fatal("the simulated release has no CX7 entry to fill in")
	}
	manifest := strings.Replace(f.release.ConfigJSON, null, string(loc), 1)
	resp, err := f.client.ApplyFirmwareObject(rpcContext(t), &rmspb.ApplyFirmwareObjectRequest{
		RackId: n.RackID, ConfigJson: manifest, Nodes: nodeSet(n),
		ComponentFilters: map[int32]*rmspb.FirmwareObjectComponentFilter{int32(n.Type): {Components: []string{"CX7", "HMC"}}}})
	if err != nil || resp.GetResponse().GetJobId() == "" || len(resp.GetJobs()) != 1 {
		t.Fatalf("ApplyFirmwareObject: %v %v", resp, err)
	}
	child := f.waitJob(t, resp.GetJobs()[0].GetJobId())
	if child.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Fatalf("child %v: %s\n%s", child.GetJobState(), child.GetErrorMessage(), child.GetResultJson())
	}
	var doc struct {
		Targets []struct {
			Component string `json:"component"`
			Status    string `json:"status"`
		} `json:"targets"`
		ActivationCount int `json:"activation_count"`
	}
	if err := json.Unmarshal([]byte(child.GetResultJson()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Targets) != 2 || doc.Targets[0].Component != "CX7" || doc.Targets[1].Component != "HMC" || doc.ActivationCount != 2 {
		t.Errorf("result_json %s: want CX7 flashed and activated first, then HMC", child.GetResultJson())
	}
	for _, d := range host.Devices() {
		if d.Family == hostsim.ConnectX7 && d.Running != "28.44.1036" {
			t.Errorf("%s runs %s, want 28.44.1036", d.Path, d.Running)
		}
	}
}

func TestBatchUpdateFirmware_InBandChecksTheProfilesFlintDeviceCounts(t *testing.T) {
	f := startNICRack(t)
	compute := f.ofKind(hw.KindCompute)
	img := f.stageImage(t, "fw-ConnectX7-rel-28_41_1000.bin", "MT_0000000838", "28.41.1000")
	resp, err := f.client.BatchUpdateFirmware(rpcContext(t), &rmspb.BatchUpdateFirmwareRequest{Activate: true,
		Nodes:           &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{withProfile(compute[0], "two-cx7"), withProfile(compute[1], "gb200-nics")}},
		FirmwareTargets: map[int32]*rmspb.FirmwareTargetList{int32(compute[0].Type): {Targets: []*rmspb.FirmwareTarget{{Target: "CX7", Filename: img}}}}})
	if err != nil || len(resp.GetJobs()) != 2 {
		t.Fatalf("BatchUpdateFirmware: %v %v", resp, err)
	}
	bad := f.waitJob(t, resp.GetJobs()[0].GetJobId())
	good := f.waitJob(t, resp.GetJobs()[1].GetJobId())
	if bad.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED || !strings.Contains(bad.GetErrorMessage(), "CX7 expected 2, found 4") {
		t.Errorf("tray with more CX7 than its profile: %v %q", bad.GetJobState(), bad.GetErrorMessage())
	}
	if burns := f.device(t, compute[0].ID).ComputeHost().Burns(); len(burns) != 0 {
		t.Errorf("the mismatched tray was burned: %v", burns)
	}
	if good.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Errorf("tray matching its profile: %v %s", good.GetJobState(), good.GetErrorMessage())
	}
}

func TestUpdateFirmware_InBandDiscoveryFailureGetsOneRecoveryACCycle(t *testing.T) {
	f := startNICRack(t)
	n := f.ofKind(hw.KindCompute)[0]
	host := f.device(t, n.ID).ComputeHost()
	host.LoseDevices() // off the bus until the tray's AC cycle
	img := f.stageImage(t, "fw-ConnectX7-rel-28_41_1000.bin", "MT_0000000838", "28.41.1000")
	resp, err := f.client.UpdateFirmware(rpcContext(t), &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Activate: true,
		Target: "CX7", Filename: img})
	if err != nil || resp.GetJobId() == "" {
		t.Fatalf("UpdateFirmware: %v %v", resp, err)
	}
	job := f.waitJob(t, resp.GetJobId())
	if job.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Fatalf("job %v: %s", job.GetJobState(), job.GetErrorMessage())
	}
	cycles := 0
	for _, r := range f.device(t, n.ID).Resets() {
		if r == "AuxPowerCycle" {
			cycles++
		}
	}
	if cycles != 2 {
		t.Errorf("%d aux power cycles, want the recovery one and the activation", cycles)
	}
	if burns := host.Burns(); len(burns) != 4 {
		t.Errorf("burns %v after the recovery, want the four CX7", burns)
	}
}
