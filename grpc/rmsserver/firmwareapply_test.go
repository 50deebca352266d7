package rmsserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
)

// firmwareVersion reads one component's version through the inventory RPC.
func (f *firmwareRack) firmwareVersion(t *testing.T, n hw.Node, id string) string {
	t.Helper()
	resp, err := f.client.GetNodeFirmwareInventory(rpcContext(t), &rmspb.GetNodeFirmwareInventoryRequest{RackId: n.RackID, NodeId: n.ID})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("inventory of %s: %v %v", n.ID, resp, err)
	}
	for _, fw := range resp.GetFirmwareList() {
		if fw.GetName() == id {
			return fw.GetVersion()
		}
	}
	t.Fatalf("node %s has no component %s", n.ID, id)
	return ""
}

// resultStatus reads "status" from a result document.
func resultStatus(t *testing.T, doc string) string {
	t.Helper()
	var v struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("result_json %q: %v", doc, err)
	}
	return v.Status
}

func TestApplyStoredFirmwareObject_UpdatesTheRackAndRecordsTheHistory(t *testing.T) {
	f := startFirmwareRack(t, nil)
	f.addRelease(t)
	nodes := f.nodes // every compute tray, switch tray and power shelf
	resp, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		RackId: nodes[0].RackID, HardwareType: "gb200-nvl", FirmwareType: "prod", Nodes: nodeSet(nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetJobId() == "" || resp.GetObjectId() != f.release.ID {
		t.Fatalf("apply: %v", resp)
	}
	if len(resp.GetJobs()) != len(nodes) {
		t.Fatalf("%d jobs for %d nodes", len(resp.GetJobs()), len(nodes))
	}
	for i, j := range resp.GetJobs() {
		if j.GetNodeId() != nodes[i].ID {
			t.Errorf("jobs[%d] node_id %q, want the caller's %q", i, j.GetNodeId(), nodes[i].ID)
		}
	}
	parent := f.waitFirmwareJob(t, r.GetJobId())
	if parent.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Fatalf("parent %v: %s %s", parent.GetJobState(), parent.GetErrorMessage(), parent.GetResultJson())
	}
	for _, j := range resp.GetJobs() {
		child := f.waitFirmwareJob(t, j.GetJobId())
		if child.GetNodeId() != j.GetNodeId() || resultStatus(t, child.GetResultJson()) != "completed" {
			t.Errorf("child %s: node %q result %s", j.GetJobId(), child.GetNodeId(), child.GetResultJson())
		}
	}
	compute := f.ofKind(hw.KindCompute)[0]
	if got, want := f.firmwareVersion(t, compute, "FW_BMC_0"), f.release.ComputeBMC.Version; got != want {
		t.Errorf("compute BMC runs %q after the apply, want %q", got, want)
	}
	if got, want := f.firmwareVersion(t, compute, "HGX_FW_BMC_0"), f.release.HMC.Version; got != want {
		t.Errorf("HMC runs %q after the apply, want %q", got, want)
	}
	sw := f.ofKind(hw.KindSwitch)[0]
	if got, want := f.firmwareVersion(t, sw, "BMC"), f.release.SwitchBMC.Version; got != want {
		t.Errorf("switch BMC runs %q after the apply, want %q", got, want)
	}
	hist, err := f.client.GetFirmwareObjectHistory(rpcContext(t), &rmspb.GetFirmwareObjectHistoryRequest{ObjectId: f.release.ID})
	if err != nil || len(hist.GetRecords()) != 1 {
		t.Fatalf("history: %v %v", hist, err)
	}
	if rec := hist.GetRecords()[0]; len(rec.GetNodeIds()) != len(nodes) || rec.GetFirmwareType() != "prod" || !rec.GetFirmwareAvailable() {
		t.Errorf("history record %v", rec)
	}

	// Applying it again finds every node up to date.
	again, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		RackId: nodes[0].RackID, ObjectId: f.release.ID, Nodes: nodeSet(nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	p := f.waitFirmwareJob(t, again.GetResponse().GetJobId())
	if p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED || !strings.Contains(p.GetStateDescription(), "already up to date") {
		t.Errorf("second apply: %v %q %s", p.GetJobState(), p.GetStateDescription(), p.GetResultJson())
	}
	child := f.waitFirmwareJob(t, again.GetJobs()[0].GetJobId())
	if resultStatus(t, child.GetResultJson()) != "already_up_to_date" {
		t.Errorf("second apply child result %s", child.GetResultJson())
	}
}

func TestApplyStoredFirmwareObject_AFailedTaskFailsTheParentNamingTheNode(t *testing.T) {
	f := startFirmwareRack(t, nil)
	f.addRelease(t)
	compute := f.ofKind(hw.KindCompute)[:3]
	f.device(t, compute[1].ID).FailAllTasks(true)
	resp, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		RackId: compute[0].RackID, ObjectId: f.release.ID, Nodes: nodeSet(compute...)})
	if err != nil {
		t.Fatal(err)
	}
	parent := f.waitFirmwareJob(t, resp.GetResponse().GetJobId())
	if parent.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED {
		t.Fatalf("parent %v, want FAILED", parent.GetJobState())
	}
	if msg := parent.GetErrorMessage(); msg != "1 of 3 firmware updates failed" {
		t.Errorf("parent error %q", msg)
	}
	if doc := parent.GetResultJson(); !strings.Contains(doc, `"node_id":"`+compute[1].ID+`"`) || strings.Contains(doc, compute[0].ID) {
		t.Errorf("parent result %s should name the failed node %s only", doc, compute[1].ID)
	}
	failed := f.waitFirmwareJob(t, resp.GetJobs()[1].GetJobId())
	if failed.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED || !strings.Contains(failed.GetResultJson(), `"phase":"poll"`) {
		t.Errorf("failed child %v %s", failed.GetJobState(), failed.GetResultJson())
	}
}

func TestApplyStoredFirmwareObject_ANodeAnotherJobHoldsIsRefusedInProgress(t *testing.T) {
	f := startFirmwareRack(t, nil)
	f.addRelease(t)
	compute := f.ofKind(hw.KindCompute)[:2]
	holder := f.holdNode(t, compute[0])
	resp, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		RackId: compute[0].RackID, ObjectId: f.release.ID, Nodes: nodeSet(compute...)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetStats().GetFailedNodes() != 1 || r.GetStats().GetSuccessfulNodes() != 1 {
		t.Fatalf("response %v", r)
	}
	if msg := r.GetNodeResults()[0].GetErrorMessage(); !strings.Contains(msg, "in progress") || !strings.Contains(msg, holder) {
		t.Errorf("busy node's error %q should say in progress and name job %s", msg, holder)
	}
	if len(resp.GetJobs()) != 1 || resp.GetJobs()[0].GetNodeId() != compute[1].ID {
		t.Errorf("jobs %v, want only %s", resp.GetJobs(), compute[1].ID)
	}
	if p := f.waitFirmwareJob(t, r.GetJobId()); p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Errorf("parent of the admitted node %v %s", p.GetJobState(), p.GetErrorMessage())
	}
}

func TestApplyStoredFirmwareObject_RefusalsOfTheRequest(t *testing.T) {
	f := startFirmwareRack(t, nil)
	compute := f.ofKind(hw.KindCompute)[:1]
	_, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		ObjectId: "NOPE_1.0", Nodes: nodeSet(compute...)})
	if status.Code(err) != codes.NotFound {
		t.Errorf("unknown object: %v, want NOT_FOUND", err)
	}
	_, err = f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		HardwareType: "no-such-hardware", Nodes: nodeSet(compute...)})
	if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "no default") {
		t.Errorf("no default: %v, want NOT_FOUND naming the missing default", err)
	}
	f.art.SetFault(f.release.ComputeBMC.Path, artifactsim.Fault{Hold: true})
	if _, err := f.client.AddFirmwareObject(rpcContext(t), &rmspb.AddFirmwareObjectRequest{ConfigJson: f.release.ConfigJSON, HardwareType: "gb200-nvl"}); err != nil {
		t.Fatal(err)
	}
	// Still downloading: in band, echoing the object, as upstream.
	busy, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		HardwareType: "gb200-nvl", Nodes: nodeSet(compute...)})
	if err != nil || busy.GetObjectId() != f.release.ID || busy.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE ||
		!strings.Contains(busy.GetResponse().GetMessage(), "is not available") || len(busy.GetJobs()) != 0 {
		t.Errorf("object still downloading: %v %v, want an in-band FAILURE naming the object", busy, err)
	}
	f.art.Release(1)
	resp, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{ObjectId: f.release.ID})
	if err != nil || resp.GetResponse().GetMessage() != noNodesMessage || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Errorf("no nodes: %v %v", resp, err)
	}
	_, err = f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		ObjectId: f.release.ID, Nodes: nodeSet(compute...),
		ComponentFilters: map[int32]*rmspb.FirmwareObjectComponentFilter{0: {Components: []string{"BMC"}}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("filter keyed by UNSPECIFIED: %v, want INVALID_ARGUMENT", err)
	}
}

func TestApplyStoredFirmwareObject_ComponentFiltersChooseTypesAndComponents(t *testing.T) {
	f := startFirmwareRack(t, nil)
	f.addRelease(t)
	compute, shelf := f.ofKind(hw.KindCompute)[0], f.ofKind(hw.KindPowerShelf)[0]
	before := f.firmwareVersion(t, compute, "HGX_FW_BMC_0")
	resp, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		ObjectId: f.release.ID, Nodes: nodeSet(compute, shelf),
		ComponentFilters: map[int32]*rmspb.FirmwareObjectComponentFilter{int32(compute.Type): {Components: []string{"bmc"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetJobs()) != 1 || resp.GetJobs()[0].GetNodeId() != compute.ID {
		t.Fatalf("jobs %v: only the filtered type's node should be updated", resp.GetJobs())
	}
	if !strings.Contains(resp.GetResponse().GetMessage(), "not selected") {
		t.Errorf("message %q should say a node was not selected", resp.GetResponse().GetMessage())
	}
	f.waitFirmwareJob(t, resp.GetResponse().GetJobId())
	if got := f.firmwareVersion(t, compute, "FW_BMC_0"); got != f.release.ComputeBMC.Version {
		t.Errorf("BMC %q, want %q", got, f.release.ComputeBMC.Version)
	}
	if got := f.firmwareVersion(t, compute, "HGX_FW_BMC_0"); got != before {
		t.Errorf("HMC changed to %q though the filter named BMC only", got)
	}
}

func TestApplyFirmwareObject_EphemeralCacheIsRemovedAndNothingIsStored(t *testing.T) {
	f := startFirmwareRack(t, nil)
	compute := f.ofKind(hw.KindCompute)[:2]
	resp, err := f.client.ApplyFirmwareObject(rpcContext(t), &rmspb.ApplyFirmwareObjectRequest{
		RackId: compute[0].RackID, ConfigJson: f.release.ConfigJSON, AccessToken: ptr("NOAUTH"), Nodes: nodeSet(compute...)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetObjectId() != f.release.ID || len(resp.GetJobs()) != 2 {
		t.Fatalf("apply %v", resp)
	}
	if p := f.waitFirmwareJob(t, resp.GetResponse().GetJobId()); p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Fatalf("parent %v %s", p.GetJobState(), p.GetErrorMessage())
	}
	// Only what the compute trays need was fetched: no switch or shelf
	// package, no NVOS image.
	fetched := map[string]bool{}
	for _, r := range f.art.Requests() {
		fetched[strings.TrimPrefix(r.Path, "/")] = true
	}
	for _, a := range []artifactsim.Artifact{f.release.SwitchBMC, f.release.NVOS, f.release.PowerShelf} {
		if fetched[strings.TrimPrefix(a.Path, "/")] {
			t.Errorf("%s fetched for an apply to compute trays", a.Name)
		}
	}
	if !fetched[strings.TrimPrefix(f.release.ComputeBMC.Path, "/")] {
		t.Errorf("the compute BMC package was not fetched (requests %v)", f.art.Requests())
	}
	eventuallyRPC(t, "temporary cache removed", func() bool {
		entries, err := os.ReadDir(filepath.Join(f.dir, "ephemeral"))
		return err == nil && len(entries) == 0
	})
	list, err := f.client.ListFirmwareObjects(rpcContext(t), &rmspb.ListFirmwareObjectsRequest{})
	if err != nil || len(list.GetObjects()) != 0 {
		t.Errorf("an ephemeral apply stored objects: %v %v", list, err)
	}
	hist, err := f.client.GetFirmwareObjectHistory(rpcContext(t), &rmspb.GetFirmwareObjectHistoryRequest{})
	if err != nil || len(hist.GetRecords()) != 0 {
		t.Errorf("an ephemeral apply wrote history: %v %v", hist, err)
	}
	if got := f.firmwareVersion(t, compute[1], "FW_BMC_0"); got != f.release.ComputeBMC.Version {
		t.Errorf("BMC %q, want %q", got, f.release.ComputeBMC.Version)
	}
}

func ptr[T any](v T) *T { return &v }

func TestApplyFirmwareObject_TheAccessTokenReachesArtifactoryOnlyAndIsNeverLogged(t *testing.T) {
	const token = "AKCp8apply-token-never-logged-91c2"
	f := startFirmwareRackWith(t, nil, artifactsim.Options{Token: hw.NewSecret(token)}, "Artifactory")
	compute := f.ofKind(hw.KindCompute)[:1]

	// A wrong token: the artifact server answers 401, the child fails in
	// stage 0 and says why without echoing either token.
	resp, err := f.client.ApplyFirmwareObject(rpcContext(t), &rmspb.ApplyFirmwareObjectRequest{
		ConfigJson: f.release.ConfigJSON, AccessToken: ptr("wrong-" + token), Nodes: nodeSet(compute...)})
	if err != nil || len(resp.GetJobs()) != 1 {
		t.Fatalf("wrong token: %v %v", resp, err)
	}
	wrong := f.waitFirmwareJob(t, resp.GetJobs()[0].GetJobId())
	if wrong.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED || !strings.Contains(wrong.GetErrorMessage(), "401") ||
		strings.Contains(wrong.GetErrorMessage(), token) {
		t.Errorf("wrong token: %v %q", wrong.GetJobState(), wrong.GetErrorMessage())
	}
	f.waitFirmwareJob(t, resp.GetResponse().GetJobId()) // the node is free again

	resp, err = f.client.ApplyFirmwareObject(rpcContext(t), &rmspb.ApplyFirmwareObjectRequest{
		ConfigJson: f.release.ConfigJSON, AccessToken: ptr(token), Nodes: nodeSet(compute...)})
	if err != nil || len(resp.GetJobs()) != 1 {
		t.Fatalf("right token: %v %v", resp, err)
	}
	if p := f.waitFirmwareJob(t, resp.GetResponse().GetJobId()); p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Fatalf("parent %v %s", p.GetJobState(), p.GetErrorMessage())
	}
	for _, r := range f.art.Requests() {
		if !r.TokenSent {
			t.Errorf("%s fetched without the token", r.Path)
		}
	}
	if logs := f.logs.String(); strings.Contains(logs, token) || strings.Contains(resp.String(), token) {
		t.Errorf("the token was logged or answered")
	}
	if !strings.Contains(f.logs.String(), "temporary firmware cache: artifact ready") {
		t.Errorf("the log does not cover the apply:\n%s", f.logs.String())
	}
}
