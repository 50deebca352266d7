package rmsserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/hw/switchimage"
)

// fastSwitchImageTiming reads actions and partitions every few
// milliseconds; the steady-state windows (6 s in all) leave room for the
// simulated switch's one-second reboot on a loaded machine.
var fastSwitchImageTiming = switchimage.Timing{
	ActionPollInterval: 5 * time.Millisecond, UninstallTimeout: 20 * time.Second, HandoffTimeout: 20 * time.Second,
	SteadyDelay: time.Millisecond, SteadyInterval: 5 * time.Millisecond,
	SteadyWindows: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second},
}

// olderBuild is what the switches run before a test installs the
// release's nvos-25.02.2553 (the simulator's default build).
const olderBuild = "nvos-25.01.1000"

// imageResult is a switch image child's result_json.
type imageResult struct {
	Status       string `json:"status"`
	NodeID       string `json:"node_id"`
	TargetBuild  string `json:"target_build"`
	CurrentBuild string `json:"current_build"`
	NextBuild    string `json:"next_build"`
	ErrorMessage string `json:"error_message"`
	ONIERecovery string `json:"onie_recovery"`
	Stages       []struct {
		Name    string            `json:"name"`
		Status  string            `json:"status"`
		Message string            `json:"message"`
		Details map[string]string `json:"details"`
	} `json:"stages"`
}

func parseImageResult(t *testing.T, raw string) imageResult {
	t.Helper()
	var r imageResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("result_json %q: %v", raw, err)
	}
	return r
}

// stageStatuses lists "name=status" of every stage, in order.
func (r imageResult) stageStatuses() string {
	var out []string
	for _, s := range r.Stages {
		out = append(out, s.Name+"="+s.Status)
	}
	return strings.Join(out, " ")
}

// stageImageFile writes an image of size bytes under firmware_dir.
func (f *firmwareRack) stageImageFile(t *testing.T, name string, size int) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(strings.Repeat("N", size)), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// setBuild makes every switch of nodes run build on partition 1, the
// other partition holding other ("" for none).
func (f *firmwareRack) setBuild(t *testing.T, build, other string, nodes ...hw.Node) {
	t.Helper()
	for _, n := range nodes {
		f.nvos(t, n.ID).SetSystemImage(build, other, 1)
	}
}

// waitImageJob polls GetSwitchSystemImageJobStatus until the job is
// terminal.
func (f *firmwareRack) waitImageJob(t *testing.T, id string) *rmspb.GetSwitchSystemImageJobStatusResponse {
	t.Helper()
	var last *rmspb.GetSwitchSystemImageJobStatusResponse
	eventuallyRPC(t, "switch image job "+id+" terminal", func() bool {
		resp, err := f.client.GetSwitchSystemImageJobStatus(rpcContext(t), &rmspb.GetSwitchSystemImageJobStatusRequest{JobId: id})
		if err != nil {
			t.Fatalf("GetSwitchSystemImageJobStatus: %v", err)
		}
		last = resp
		return resp.GetState() == "completed" || resp.GetState() == "failed"
	})
	return last
}

// childResults waits for every job of jobs and returns their results by
// node id.
func (f *firmwareRack) childResults(t *testing.T, jobs []*rmspb.SwitchSystemImageUpdateJobInfo) map[string]imageResult {
	t.Helper()
	out := map[string]imageResult{}
	for _, j := range jobs {
		st := f.waitImageJob(t, j.GetJobId())
		if st.GetNodeId() != j.GetNodeId() {
			t.Errorf("job %s is of node %q, jobs[] says %q", j.GetJobId(), st.GetNodeId(), j.GetNodeId())
		}
		out[j.GetNodeId()] = parseImageResult(t, st.GetResultJson())
	}
	return out
}

func (f *firmwareRack) updateImage(t *testing.T, file string, nodes ...hw.Node) *rmspb.UpdateSwitchSystemImageResponse {
	t.Helper()
	resp, err := f.client.UpdateSwitchSystemImage(rpcContext(t), &rmspb.UpdateSwitchSystemImageRequest{
		Nodes: nodeSet(nodes...), ImageFilename: file, LocalFilePath: file})
	if err != nil {
		t.Fatalf("UpdateSwitchSystemImage: %v", err)
	}
	return resp
}

var allStagesCompleted = "inspect_state=completed cleanup_old_partition=completed stage_image=completed " +
	"trigger_install=completed wait_for_install_handoff=completed wait_for_target_steady_state=completed"

// Several switches install the image, reboot into it and report it as
// current and next build; a compute tray in the same request fails in its
// own result and gets no job.
func TestUpdateSwitchSystemImageInstallsOnEverySwitch(t *testing.T) {
	f := startFirmwareRack(t, nil)
	switches := f.ofKind(hw.KindSwitch)[:3]
	f.setBuild(t, olderBuild, "nvos-24.12.0001", switches...)
	file := f.stageImageFile(t, "nvos-amd64-25.11.1042.bin", 4096)
	compute := f.ofKind(hw.KindCompute)[0]
	resp := f.updateImage(t, file, append(append([]hw.Node(nil), switches...), compute)...)

	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetStats().GetSuccessfulNodes() != 3 || r.GetStats().GetFailedNodes() != 1 {
		t.Fatalf("reply %v, want 3 switches started and the compute tray failed", r)
	}
	if got := r.GetNodeResults()[3].GetErrorMessage(); !strings.Contains(got, "not an NVLink switch") {
		t.Errorf("compute tray result %q", got)
	}
	if len(resp.GetJobs()) != 3 {
		t.Fatalf("jobs %v, want one per switch", resp.GetJobs())
	}
	for i, j := range resp.GetJobs() {
		if j.GetNodeId() != switches[i].ID {
			t.Errorf("jobs[%d] echoes %q, want %q", i, j.GetNodeId(), switches[i].ID)
		}
	}
	parent := f.waitImageJob(t, r.GetJobId())
	if parent.GetState() != "completed" || parent.GetMessage() != "All 3 switch system image updates completed successfully" {
		t.Fatalf("parent %s: %q (%s)", parent.GetState(), parent.GetMessage(), parent.GetErrorMessage())
	}
	for id, res := range f.childResults(t, resp.GetJobs()) {
		if res.Status != "success" || res.TargetBuild != "nvos-25.11.1042" || res.CurrentBuild != res.TargetBuild || res.NextBuild != res.TargetBuild {
			t.Errorf("%s: result %+v", id, res)
		}
		if got := res.stageStatuses(); got != allStagesCompleted {
			t.Errorf("%s: stages %s", id, got)
		}
		if res.Stages[1].Details["uninstalled"] != "nvos-24.12.0001" {
			t.Errorf("%s: cleanup details %v, want the old build uninstalled", id, res.Stages[1].Details)
		}
		if res.ONIERecovery != "not needed" {
			t.Errorf("%s: onie_recovery %q", id, res.ONIERecovery)
		}
		p1, p2, cur, next := f.nvos(t, id).SystemImage()
		if builds := []string{p1, p2}; builds[cur-1] != "nvos-25.11.1042" || cur != next {
			t.Errorf("%s: switch runs partition %d of %v, next %d", id, cur, builds, next)
		}
		if _, ok := f.nvos(t, id).File("/host/nos-images/" + file); !ok {
			t.Errorf("%s: image not staged", id)
		}
	}
}

// A switch that already runs the target on both partitions is done after
// inspect_state, and nothing is uploaded.
func TestUpdateSwitchSystemImageAlreadyUpToDate(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw := f.ofKind(hw.KindSwitch)[0]
	file := f.stageImageFile(t, "nvos-amd64-25.02.2553.bin", 2048)
	resp := f.updateImage(t, file, sw)
	parent := f.waitImageJob(t, resp.GetResponse().GetJobId())
	if parent.GetState() != "completed" || !strings.Contains(parent.GetMessage(), "already up to date") {
		t.Fatalf("parent %s: %q", parent.GetState(), parent.GetMessage())
	}
	res := f.childResults(t, resp.GetJobs())[sw.ID]
	want := "inspect_state=completed cleanup_old_partition=skipped stage_image=skipped trigger_install=skipped " +
		"wait_for_install_handoff=skipped wait_for_target_steady_state=skipped"
	if res.Status != "already_up_to_date" || res.stageStatuses() != want {
		t.Errorf("result %s: %s", res.Status, res.stageStatuses())
	}
	if _, ok := f.nvos(t, sw.ID).File("/host/nos-images/" + file); ok {
		t.Error("an up-to-date switch was sent the image")
	}
}

// One switch whose install fails fails the parent, which names it; the
// others complete.
func TestUpdateSwitchSystemImageOneSwitchFails(t *testing.T) {
	f := startFirmwareRack(t, nil)
	switches := f.ofKind(hw.KindSwitch)[:3]
	f.setBuild(t, olderBuild, "", switches...)
	f.nvos(t, switches[1].ID).FailImageInstalls("not enough space on /host")
	file := f.stageImageFile(t, "nvos-amd64-25.11.1042.bin", 4096)
	resp := f.updateImage(t, file, switches...)
	parent := f.waitImageJob(t, resp.GetResponse().GetJobId())
	if parent.GetState() != "failed" || parent.GetErrorMessage() != "1 of 3 switch system image updates failed" ||
		!strings.Contains(parent.GetResultJson(), `"node_id":"`+switches[1].ID+`"`) {
		t.Fatalf("parent %s: %q, result %s", parent.GetState(), parent.GetErrorMessage(), parent.GetResultJson())
	}
	results := f.childResults(t, resp.GetJobs())
	bad := results[switches[1].ID]
	if bad.Status != "failed" || !strings.Contains(bad.ErrorMessage, "not enough space on /host") ||
		!strings.Contains(bad.stageStatuses(), "wait_for_install_handoff=failed wait_for_target_steady_state=skipped") {
		t.Errorf("failed switch: %s %q: %s", bad.Status, bad.ErrorMessage, bad.stageStatuses())
	}
	for _, sw := range []hw.Node{switches[0], switches[2]} {
		if res := results[sw.ID]; res.Status != "success" {
			t.Errorf("%s: %s %q", sw.ID, res.Status, res.ErrorMessage)
		}
	}
}

// A switch whose reboot outlasts every steady-state window fails in
// wait_for_target_steady_state.
func TestUpdateSwitchSystemImageRebootLongerThanTheWindows(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw := f.ofKind(hw.KindSwitch)[0]
	f.setBuild(t, olderBuild, "", sw)
	f.nvos(t, sw.ID).LongImageReboots(time.Minute)
	file := f.stageImageFile(t, "nvos-amd64-25.11.1042.bin", 4096)
	resp := f.updateImage(t, file, sw)
	st := f.waitImageJob(t, resp.GetJobs()[0].GetJobId())
	res := parseImageResult(t, st.GetResultJson())
	if st.GetState() != "failed" || !strings.Contains(st.GetErrorMessage(), "did not report nvos-25.11.1042 as current and next build within 6s") ||
		!strings.HasSuffix(res.stageStatuses(), "wait_for_install_handoff=completed wait_for_target_steady_state=failed") {
		t.Fatalf("job %s: %q: %s", st.GetState(), st.GetErrorMessage(), res.stageStatuses())
	}
	if got := res.Stages[5].Details["window"]; got != "3 of 3" {
		t.Errorf("ended in window %q, want the last of 3", got)
	}
}

// An install that resets admin to admin/admin with an expired password is
// recovered over SSH with the node's password, and the update completes.
func TestUpdateSwitchSystemImageRecoversTheExpiredAdmin(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw := f.ofKind(hw.KindSwitch)[0]
	f.setBuild(t, olderBuild, "", sw)
	f.nvos(t, sw.ID).ExpireAdminOnInstall(true)
	file := f.stageImageFile(t, "nvos-amd64-25.11.1042.bin", 4096)
	resp := f.updateImage(t, file, sw)
	st := f.waitImageJob(t, resp.GetJobs()[0].GetJobId())
	res := parseImageResult(t, st.GetResultJson())
	if st.GetState() != "completed" || res.stageStatuses() != allStagesCompleted {
		t.Fatalf("job %s %q: %s", st.GetState(), st.GetErrorMessage(), res.stageStatuses())
	}
	f.checkAdminRecovered(t, res, sw)
}

// An image that is too small, outside firmware_dir, missing or without a
// version in its name starts nothing: every node fails naming why.
func TestUpdateSwitchSystemImageRefusesBadImages(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw := f.ofKind(hw.KindSwitch)[0]
	small := f.stageImageFile(t, "nvos-amd64-25.11.1042.bin", 1023)
	outside := filepath.Join(t.TempDir(), "nvos-amd64-25.11.1042.bin")
	if err := os.WriteFile(outside, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	unversioned := f.stageImageFile(t, "nvos-latest.bin", 4096)
	for _, c := range []struct{ local, name, want string }{
		{small, small, "has 1023 bytes; an NVOS image has at least 1024"},
		{outside, "", "is not inside firmware_dir"},
		{"../" + filepath.Base(outside), "", "is not inside firmware_dir"},
		{"missing-25.1.1.bin", "", "not found in firmware_dir"},
		{unversioned, unversioned, "exactly one version X.Y.Z"},
		{small, ".hidden-1.2.3.bin", "only [A-Za-z0-9._-]"},
	} {
		resp, err := f.client.UpdateSwitchSystemImage(rpcContext(t), &rmspb.UpdateSwitchSystemImageRequest{
			Nodes: nodeSet(sw), ImageFilename: c.name, LocalFilePath: c.local})
		if err != nil {
			t.Fatalf("%s: %v", c.local, err)
		}
		r := resp.GetResponse()
		if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetJobId() != "" || len(resp.GetJobs()) != 0 ||
			!strings.Contains(r.GetNodeResults()[0].GetErrorMessage(), c.want) || !strings.Contains(r.GetMessage(), c.want) {
			t.Errorf("%s as %q: %v, want a refusal with %q", c.local, c.name, r, c.want)
		}
	}
	if n := f.nvos(t, sw.ID).NVUERequests(); n != 0 {
		t.Errorf("a refused image reached the switch (%d NVUE requests)", n)
	}
}

// ApplyStoredSwitchSystemImage installs the default object's NVOS image
// and writes the apply history.
func TestApplyStoredSwitchSystemImageRecordsTheHistory(t *testing.T) {
	f := startFirmwareRack(t, nil)
	f.addRelease(t)
	switches := f.ofKind(hw.KindSwitch)[:2]
	f.setBuild(t, olderBuild, "", switches...)
	resp, err := f.client.ApplyStoredSwitchSystemImage(rpcContext(t), &rmspb.ApplyStoredSwitchSystemImageRequest{
		RackId: switches[0].RackID, HardwareType: "gb200-nvl", SoftwareType: "prod", Nodes: nodeSet(switches...)})
	if err != nil {
		t.Fatalf("ApplyStoredSwitchSystemImage: %v", err)
	}
	if resp.GetObjectId() != f.release.ID || resp.GetImageFilename() != "nvos-amd64-25.02.2553.bin" || len(resp.GetJobs()) != 2 {
		t.Fatalf("reply %v", resp)
	}
	parent := f.waitImageJob(t, resp.GetResponse().GetJobId())
	if parent.GetState() != "completed" {
		t.Fatalf("parent %s: %q", parent.GetState(), parent.GetErrorMessage())
	}
	for id, res := range f.childResults(t, resp.GetJobs()) {
		if res.Status != "success" || res.CurrentBuild != "nvos-25.02.2553" {
			t.Errorf("%s: %+v", id, res)
		}
	}
	hist, err := f.client.GetFirmwareObjectHistory(rpcContext(t), &rmspb.GetFirmwareObjectHistoryRequest{ObjectId: f.release.ID})
	if err != nil || len(hist.GetRecords()) != 1 {
		t.Fatalf("history %v %v", hist, err)
	}
	rec := hist.GetRecords()[0]
	if rec.GetRackId() != switches[0].RackID || strings.Join(rec.GetNodeIds(), ",") != switches[0].ID+","+switches[1].ID ||
		rec.GetFirmwareType() != "prod" || rec.GetHardwareType() != "gb200-nvl" {
		t.Errorf("history record %v", rec)
	}

	// A channel the object has no image for fails the batch in band,
	// echoing the object (upstream's resolve_switch_system_image failure),
	// and is not recorded.
	dev, err := f.client.ApplyStoredSwitchSystemImage(rpcContext(t), &rmspb.ApplyStoredSwitchSystemImageRequest{
		ObjectId: f.release.ID, SoftwareType: "dev", Nodes: nodeSet(switches...)})
	if err != nil || dev.GetObjectId() != f.release.ID || dev.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE ||
		!strings.Contains(dev.GetResponse().GetMessage(), `no NVOS image for software_type "dev"`) || len(dev.GetJobs()) != 0 {
		t.Errorf("dev channel: %v %v", dev, err)
	}
	if hist, err := f.client.GetFirmwareObjectHistory(rpcContext(t), &rmspb.GetFirmwareObjectHistoryRequest{ObjectId: f.release.ID}); err != nil ||
		len(hist.GetRecords()) != 1 {
		t.Errorf("history after a refused apply %v %v", hist, err)
	}
}

// ApplySwitchSystemImage downloads the image into a temporary cache,
// installs it and removes the cache once the batch is over.
func TestApplySwitchSystemImageRemovesItsCache(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw := f.ofKind(hw.KindSwitch)[0]
	f.setBuild(t, olderBuild, "", sw)
	resp, err := f.client.ApplySwitchSystemImage(rpcContext(t), &rmspb.ApplySwitchSystemImageRequest{
		RackId: sw.RackID, ConfigJson: f.release.ConfigJSON, Nodes: nodeSet(sw)})
	if err != nil {
		t.Fatalf("ApplySwitchSystemImage: %v", err)
	}
	if resp.GetImageFilename() != "nvos-amd64-25.02.2553.bin" || len(resp.GetJobs()) != 1 {
		t.Fatalf("reply %v", resp)
	}
	parent := f.waitImageJob(t, resp.GetResponse().GetJobId())
	if parent.GetState() != "completed" {
		t.Fatalf("parent %s: %q", parent.GetState(), parent.GetErrorMessage())
	}
	eventuallyRPC(t, "temporary cache removed", func() bool {
		entries, err := os.ReadDir(filepath.Join(f.dir, "ephemeral"))
		return err == nil && len(entries) == 0
	})
	hist, err := f.client.GetFirmwareObjectHistory(rpcContext(t), &rmspb.GetFirmwareObjectHistoryRequest{})
	if err != nil || len(hist.GetRecords()) != 0 {
		t.Errorf("ephemeral apply wrote history %v %v", hist, err)
	}
}

// A job cancelled while it waits for the switch is Failed with status
// "cancelled", naming the stage.
func TestSwitchSystemImageJobCancelledDuringTheWait(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw := f.ofKind(hw.KindSwitch)[0]
	f.setBuild(t, olderBuild, "", sw)
	f.nvos(t, sw.ID).LongImageReboots(time.Minute)
	file := f.stageImageFile(t, "nvos-amd64-25.11.1042.bin", 4096)
	resp := f.updateImage(t, file, sw)
	child := resp.GetJobs()[0].GetJobId()
	eventuallyRPC(t, "the steady-state wait", func() bool {
		st, err := f.client.GetSwitchSystemImageJobStatus(rpcContext(t), &rmspb.GetSwitchSystemImageJobStatusRequest{JobId: child})
		return err == nil && strings.Contains(st.GetMessage(), "window 1 of 3")
	})
	if _, err := f.engine.Cancel(rpcContext(t), child); err != nil {
		t.Fatal(err)
	}
	st := f.waitImageJob(t, child)
	res := parseImageResult(t, st.GetResultJson())
	if st.GetState() != "failed" || res.Status != "cancelled" ||
		st.GetErrorMessage() != "switch system image job cancelled during wait_for_target_steady_state" {
		t.Errorf("job %s %q: %s %s", st.GetState(), st.GetErrorMessage(), res.Status, res.stageStatuses())
	}
}

// onieFile is the image the ONIE tests install.
const onieFile = "nvos-amd64-25.11.1042.bin"

// updateFromONIE boots the rack's first switch into ONIE, applies fault
// to it (when set), updates it to onieFile with allow_onie_recovery as
// allow, and returns the switch, its finished child and the child's
// result.
func (f *firmwareRack) updateFromONIE(t *testing.T, allow bool, fault func(*nvossim.Switch)) (hw.Node, *rmspb.GetSwitchSystemImageJobStatusResponse, imageResult) {
	t.Helper()
	sw := f.ofKind(hw.KindSwitch)[0]
	f.nvos(t, sw.ID).BootONIE()
	if fault != nil {
		fault(f.nvos(t, sw.ID).Switch)
	}
	file := f.stageImageFile(t, onieFile, 4096)
	resp, err := f.client.UpdateSwitchSystemImage(rpcContext(t), &rmspb.UpdateSwitchSystemImageRequest{
		Nodes: nodeSet(sw), ImageFilename: file, LocalFilePath: file, AllowOnieRecovery: allow})
	if err != nil || len(resp.GetJobs()) != 1 {
		t.Fatalf("UpdateSwitchSystemImage: %v %v", resp, err)
	}
	st := f.waitImageJob(t, resp.GetJobs()[0].GetJobId())
	return sw, st, parseImageResult(t, st.GetResultJson())
}

// A switch without NVOS (it boots ONIE) fails in inspect_state, saying it
// runs ONIE and that allow_onie_recovery would install the image; nothing
// is installed.
func TestUpdateSwitchSystemImageOnONIENeedsTheRecoveryFlag(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw, st, res := f.updateFromONIE(t, false, nil)
	want := sw.ID + " runs ONIE " + nvossim.ONIEVersion + "; set allow_onie_recovery to install " + onieFile + " from ONIE"
	if st.GetState() != "failed" || !strings.Contains(st.GetErrorMessage(), want) || !strings.HasPrefix(res.stageStatuses(), "inspect_state=failed ") {
		t.Fatalf("job %s %q (%s), want failed in inspect_state with %q", st.GetState(), st.GetErrorMessage(), res.stageStatuses(), want)
	}
	if res.ONIERecovery != "needed but not allowed" || res.Stages[0].Details["onie"] != nvossim.ONIEVersion {
		t.Errorf("onie_recovery %q, inspect details %v", res.ONIERecovery, res.Stages[0].Details)
	}
	if !f.nvos(t, sw.ID).InONIE() {
		t.Error("the switch left ONIE without the flag")
	}
}

// With allow_onie_recovery, a switch without NVOS gets the image through
// ONIE: streamed to its RAM disk, installed by onie-nos-install, rebooted
// into NVOS with the factory admin login, which is recovered; the job
// completes with the target as current and next build.
func TestUpdateSwitchSystemImageRecoversASwitchFromONIE(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw, st, res := f.updateFromONIE(t, true, nil)
	if st.GetState() != "completed" || res.stageStatuses() != allStagesCompleted {
		t.Fatalf("job %s %q: %s", st.GetState(), st.GetErrorMessage(), res.stageStatuses())
	}
	if res.ONIERecovery != "performed from ONIE "+nvossim.ONIEVersion || res.CurrentBuild != "nvos-25.11.1042" || res.NextBuild != res.CurrentBuild {
		t.Errorf("result %+v", res)
	}
	if got := res.Stages[2].Details; got["path"] != "/tmp/"+onieFile || got["via"] != "ONIE shell" || got["bytes"] != "4096" {
		t.Errorf("stage_image details %v", got)
	}
	if got := res.Stages[3].Details["installer"]; got != "onie-nos-install /tmp/"+onieFile {
		t.Errorf("trigger_install details %v", res.Stages[3].Details)
	}
	p1, _, cur, next := f.nvos(t, sw.ID).SystemImage()
	if f.nvos(t, sw.ID).InONIE() || p1 != "nvos-25.11.1042" || cur != 1 || next != 1 {
		t.Errorf("switch after the recovery: ONIE %v, partition 1 %q, current %d next %d", f.nvos(t, sw.ID).InONIE(), p1, cur, next)
	}
	f.checkAdminRecovered(t, res, sw)
}

// checkAdminRecovered checks that an update recovered the admin login an
// install expired, and that the node's own credentials work again.
func (f *firmwareRack) checkAdminRecovered(t *testing.T, res imageResult, sw hw.Node) {
	t.Helper()
	if got := res.Stages[5].Details["admin_password_recovered"]; got != "true" {
		t.Errorf("admin_password_recovered %q", got)
	}
	inv, err := f.client.BatchGetFirmwareInventory(rpcContext(t), &rmspb.BatchGetFirmwareInventoryRequest{Nodes: nodeSet(sw)})
	if err != nil || inv.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Errorf("inventory after the recovery: %v %v", inv.GetResponse(), err)
	}
}

// An ONIE install that fails ends the job in trigger_install with the
// installer's error, and the switch stays in ONIE.
func TestUpdateSwitchSystemImageONIEInstallFailure(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw, st, res := f.updateFromONIE(t, true, func(s *nvossim.Switch) { s.FailImageInstalls("image signature check failed") })
	if st.GetState() != "failed" || !strings.Contains(st.GetErrorMessage(), "image signature check failed") ||
		!strings.Contains(res.stageStatuses(), "trigger_install=failed") {
		t.Fatalf("job %s %q: %s, want failed in trigger_install with the installer's error", st.GetState(), st.GetErrorMessage(), res.stageStatuses())
	}
	if !f.nvos(t, sw.ID).InONIE() {
		t.Error("the switch left ONIE after a failed install")
	}
}
