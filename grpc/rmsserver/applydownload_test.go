package rmsserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

// callerDeadline is the deadline of a caller of the inline applies in
// these tests: well under librms' 10 s read timeout, and far longer than
// an apply that answers at once takes on a loaded machine.
const callerDeadline = 3 * time.Second

// callerContext is a context with the caller's deadline.
func callerContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callerDeadline)
	t.Cleanup(cancel)
	return ctx
}

// requestsFor counts the artifact server's requests for a.
func (f *firmwareRack) requestsFor(a artifactsim.Artifact) int {
	n := 0
	for _, r := range f.art.Requests() {
		if strings.TrimPrefix(r.Path, "/") == strings.TrimPrefix(a.Path, "/") {
			n++
		}
	}
	return n
}

// waitHeld waits until the artifact server holds n requests.
func (f *firmwareRack) waitHeld(t *testing.T, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), firmwareWait)
	defer cancel()
	if err := f.art.WaitHeld(ctx, n); err != nil {
		t.Fatalf("the artifact server never held %d requests: %v", n, err)
	}
}

// waitEphemeralEmpty waits until no temporary firmware cache is left.
func (f *firmwareRack) waitEphemeralEmpty(t *testing.T) {
	t.Helper()
	eventuallyRPC(t, "temporary cache removed", func() bool {
		entries, err := os.ReadDir(filepath.Join(f.dir, "ephemeral"))
		return (err == nil || os.IsNotExist(err)) && len(entries) == 0
	})
}

// firmwareStatus reads a job through GetFirmwareJobStatus.
func (f *firmwareRack) firmwareStatus(t *testing.T, id string) *rmspb.GetFirmwareJobStatusResponse {
	t.Helper()
	st, err := f.client.GetFirmwareJobStatus(rpcContext(t), &rmspb.GetFirmwareJobStatusRequest{JobId: id})
	if err != nil {
		t.Fatalf("GetFirmwareJobStatus %s: %v", id, err)
	}
	return st
}

// An apply whose artifact server holds the body longer than the caller
// waits still answers SUCCESS with the parent and child ids; the children
// show stage 0 until the body comes, then update their nodes. The package
// both nodes need is downloaded once.
func TestApplyFirmwareObject_AnswersBeforeTheArtifactServerSendsTheBody(t *testing.T) {
	f := startFirmwareRack(t, nil)
	compute := f.ofKind(hw.KindCompute)[:2]
	f.art.SetFault(f.release.ComputeBMC.Path, artifactsim.Fault{Hold: true})
	resp, err := f.client.ApplyFirmwareObject(callerContext(t), &rmspb.ApplyFirmwareObjectRequest{
		RackId: compute[0].RackID, ConfigJson: f.release.ConfigJSON, Nodes: nodeSet(compute...)})
	if err != nil {
		t.Fatalf("ApplyFirmwareObject while the artifact server holds the body: %v", err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetJobId() == "" || len(resp.GetJobs()) != 2 {
		t.Fatalf("apply: %v", resp)
	}
	f.waitHeld(t, 1)
	for _, j := range resp.GetJobs() {
		eventuallyRPC(t, "child "+j.GetJobId()+" in stage 0", func() bool {
			st := f.firmwareStatus(t, j.GetJobId())
			return st.GetJobState() == rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_RUNNING &&
				strings.HasPrefix(st.GetStateDescription(), "Stage 0: downloading firmware artifacts (")
		})
	}
	if v := f.firmwareVersion(t, compute[0], "FW_BMC_0"); v == f.release.ComputeBMC.Version {
		t.Fatalf("the BMC runs %s before its package was downloaded", v)
	}
	f.art.Release(1)
	if p := f.waitFirmwareJob(t, r.GetJobId()); p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Fatalf("parent %v %s", p.GetJobState(), p.GetErrorMessage())
	}
	for _, n := range compute {
		if got := f.firmwareVersion(t, n, "FW_BMC_0"); got != f.release.ComputeBMC.Version {
			t.Errorf("%s: BMC %q, want %q", n.ID, got, f.release.ComputeBMC.Version)
		}
	}
	if n := f.requestsFor(f.release.ComputeBMC); n != 1 {
		t.Errorf("the package both nodes need was requested %d times, want once", n)
	}
	f.waitEphemeralEmpty(t)
}

// A corrupt package fails exactly the children that need it, each naming
// it; a node that does not need it is updated; the cache is removed.
func TestApplyFirmwareObject_ACorruptPackageFailsOnlyTheChildrenNeedingIt(t *testing.T) {
	f := startFirmwareRack(t, nil)
	compute := f.ofKind(hw.KindCompute)[:2]
	sw := f.ofKind(hw.KindSwitch)[0]
	f.art.SetFault(f.release.HMC.Path, artifactsim.Fault{WrongBytes: true})
	nodes := append(append([]hw.Node(nil), compute...), sw)
	resp, err := f.client.ApplyFirmwareObject(callerContext(t), &rmspb.ApplyFirmwareObjectRequest{
		ConfigJson: f.release.ConfigJSON, Nodes: nodeSet(nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetJobs()) != 3 {
		t.Fatalf("apply: %v", resp)
	}
	for _, j := range resp.GetJobs()[:2] {
		st := f.waitFirmwareJob(t, j.GetJobId())
		msg := st.GetErrorMessage()
		if st.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED || !strings.Contains(msg, f.release.HMC.Name) ||
			!strings.Contains(strings.ToLower(msg), "sha") {
			t.Errorf("compute child %s: %v %q; want failed naming %s and the checksum", j.GetNodeId(), st.GetJobState(), msg, f.release.HMC.Name)
		}
		if st.GetErrorCode() != rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE {
			t.Errorf("compute child error code %v", st.GetErrorCode())
		}
	}
	if st := f.waitFirmwareJob(t, resp.GetJobs()[2].GetJobId()); st.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Errorf("switch child %v %q: it needs no compute package", st.GetJobState(), st.GetErrorMessage())
	}
	if got := f.firmwareVersion(t, sw, "BMC"); got != f.release.SwitchBMC.Version {
		t.Errorf("switch BMC %q, want %q", got, f.release.SwitchBMC.Version)
	}
	if p := f.waitFirmwareJob(t, resp.GetResponse().GetJobId()); p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED {
		t.Errorf("parent %v", p.GetJobState())
	}
	if n := f.requestsFor(f.release.HMC); n != 1 {
		t.Errorf("the corrupt package was requested %d times, want once for the apply", n)
	}
	f.waitEphemeralEmpty(t)

	if _, err := f.client.ApplyFirmwareObject(rpcContext(t), &rmspb.ApplyFirmwareObjectRequest{
		ConfigJson: `{"ProductName":"X"}`, Nodes: nodeSet(compute...)}); err == nil {
		t.Errorf("an invalid manifest was accepted")
	}
}

// Cancelling the apply during stage 0 stops its download: the artifact
// server sees the request go, the child ends cancelled and the cache is
// removed.
func TestApplyFirmwareObject_CancelDuringTheDownloadStopsIt(t *testing.T) {
	f := startFirmwareRack(t, nil)
	compute := f.ofKind(hw.KindCompute)[0]
	f.art.SetFault(f.release.ComputeBMC.Path, artifactsim.Fault{Hold: true})
	resp, err := f.client.ApplyFirmwareObject(callerContext(t), &rmspb.ApplyFirmwareObjectRequest{
		ConfigJson: f.release.ConfigJSON, Nodes: nodeSet(compute)})
	if err != nil || len(resp.GetJobs()) != 1 {
		t.Fatalf("apply: %v %v", resp, err)
	}
	f.waitHeld(t, 1)
	if _, err := f.engine.Cancel(rpcContext(t), resp.GetResponse().GetJobId()); err != nil {
		t.Fatal(err)
	}
	st := f.waitFirmwareJob(t, resp.GetJobs()[0].GetJobId())
	if st.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED ||
		st.GetErrorMessage() != "firmware update job cancelled while downloading its artifacts" {
		t.Errorf("child %v %q", st.GetJobState(), st.GetErrorMessage())
	}
	eventuallyRPC(t, "the held request gone", func() bool { return f.art.Held() == 0 })
	f.waitEphemeralEmpty(t)
}

// ApplySwitchSystemImage answers while the NVOS image is still held by
// the artifact server; the child reports stage 0, then installs the image.
func TestApplySwitchSystemImage_AnswersBeforeTheArtifactServerSendsTheImage(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sws := f.ofKind(hw.KindSwitch)[:2]
	f.setBuild(t, olderBuild, "", sws...)
	f.art.SetFault(f.release.NVOS.Path, artifactsim.Fault{Hold: true})
	resp, err := f.client.ApplySwitchSystemImage(callerContext(t), &rmspb.ApplySwitchSystemImageRequest{
		RackId: sws[0].RackID, ConfigJson: f.release.ConfigJSON, Nodes: nodeSet(sws...)})
	if err != nil {
		t.Fatalf("ApplySwitchSystemImage while the artifact server holds the image: %v", err)
	}
	if resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetJobs()) != 2 {
		t.Fatalf("apply: %v", resp)
	}
	f.waitHeld(t, 1)
	child := resp.GetJobs()[0].GetJobId()
	eventuallyRPC(t, "child in stage 0", func() bool {
		st, err := f.client.GetSwitchSystemImageJobStatus(rpcContext(t), &rmspb.GetSwitchSystemImageJobStatusRequest{JobId: child})
		return err == nil && st.GetState() == "running" && st.GetMessage() == "Stage 0: downloading the NVOS system image (0/1)"
	})
	f.art.Release(1)
	if p := f.waitImageJob(t, resp.GetResponse().GetJobId()); p.GetState() != "completed" {
		t.Fatalf("parent %s %q", p.GetState(), p.GetErrorMessage())
	}
	for _, sw := range sws {
		p1, p2, current, _ := f.nvos(t, sw.ID).SystemImage()
		if running := []string{p1, p2}[current-1]; running != "nvos-25.02.2553" {
			t.Errorf("%s runs %s, want the applied nvos-25.02.2553", sw.ID, running)
		}
	}
	if n := f.requestsFor(f.release.NVOS); n != 1 {
		t.Errorf("the image was requested %d times, want once", n)
	}
	f.waitEphemeralEmpty(t)
}

// An image the artifact server does not have fails every child, naming
// it; the cache is removed.
func TestApplySwitchSystemImage_AMissingImageFailsTheChildrenNamingIt(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw := f.ofKind(hw.KindSwitch)[0]
	f.setBuild(t, olderBuild, "", sw)
	f.art.SetFault(f.release.NVOS.Path, artifactsim.Fault{Status: 404})
	resp, err := f.client.ApplySwitchSystemImage(callerContext(t), &rmspb.ApplySwitchSystemImageRequest{
		ConfigJson: f.release.ConfigJSON, Nodes: nodeSet(sw)})
	if err != nil || len(resp.GetJobs()) != 1 {
		t.Fatalf("apply: %v %v", resp, err)
	}
	st := f.waitImageJob(t, resp.GetJobs()[0].GetJobId())
	if st.GetState() != "failed" || !strings.Contains(st.GetErrorMessage(), f.release.NVOS.Name) || !strings.Contains(st.GetErrorMessage(), "404") {
		t.Errorf("child %s %q; want failed naming %s and the 404", st.GetState(), st.GetErrorMessage(), f.release.NVOS.Name)
	}
	if p1, p2, current, _ := f.nvos(t, sw.ID).SystemImage(); []string{p1, p2}[current-1] != olderBuild {
		t.Errorf("the switch changed build without an image")
	}
	f.waitEphemeralEmpty(t)
}
