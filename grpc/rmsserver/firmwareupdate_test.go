package rmsserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
)

// stagePackage writes a simulator package carrying version into
// firmware_dir and returns its name there.
func (f *firmwareRack) stagePackage(t *testing.T, name, version string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, name), sim.FirmwarePackage(version, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestUpdateFirmware_FlashesActivatesAndReportsTheNewVersion(t *testing.T) {
	f := startFirmwareRack(t, nil)
	n := f.ofKind(hw.KindCompute)[0]
	pkg := f.stagePackage(t, "bmc-direct.fwpkg", "GB200Nvl-26.01-9")
	resp, err := f.client.UpdateFirmware(rpcContext(t), &rmspb.UpdateFirmwareRequest{
		RackId: n.RackID, NodeId: n.ID, Filename: pkg, Target: "FW_BMC_0", Activate: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || resp.GetJobId() == "" {
		t.Fatalf("UpdateFirmware: %v", resp)
	}
	job := f.waitFirmwareJob(t, resp.GetJobId())
	if job.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED || job.GetNodeId() != n.ID {
		t.Fatalf("job %v node %q: %s", job.GetJobState(), job.GetNodeId(), job.GetErrorMessage())
	}
	if !strings.Contains(job.GetResultJson(), `"activated":true`) {
		t.Errorf("result %s should say the firmware was activated", job.GetResultJson())
	}
	if got := f.firmwareVersion(t, n, "FW_BMC_0"); got != "GB200Nvl-26.01-9" {
		t.Errorf("BMC runs %q, want the flashed GB200Nvl-26.01-9", got)
	}
}

func TestUpdateFirmware_RefusesInBandWithoutStartingAJob(t *testing.T) {
	f := startFirmwareRack(t, map[string][]string{"gb200-full": {"FW_BMC_0"}})
	n := f.ofKind(hw.KindCompute)[0]
	sw := f.ofKind(hw.KindSwitch)[0]
	pkg := f.stagePackage(t, "ok.fwpkg", "1.0")
	outside := filepath.Join(t.TempDir(), "outside.fwpkg")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.dir, "link.fwpkg")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		req  *rmspb.UpdateFirmwareRequest
		code rmspb.FirmwareUpdateError
		says string
	}{
		{"no ids", &rmspb.UpdateFirmwareRequest{Filename: pkg}, rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE, "required"},
		{"unknown node", &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: "ghost", Filename: pkg},
			rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_TARGET_NOT_FOUND, "ghost"},
		{"no target", &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID}, rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE, "no firmware target"},
		{"missing file", &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Filename: "nope.fwpkg"},
			rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_FILE_NOT_FOUND, "not found"},
		{"dot dot", &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Filename: "../../etc/passwd"},
			rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_FILE_NOT_FOUND, "not inside firmware_dir"},
		{"absolute outside", &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Filename: outside},
			rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_FILE_NOT_FOUND, "not inside firmware_dir"},
		{"symlink out", &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Filename: "link.fwpkg"},
			rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_FILE_NOT_FOUND, "not inside firmware_dir"},
		{"in-band NIC", &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Filename: pkg, Target: "CX7"},
			rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_CLIENT_FAILURE, "host_endpoint"},
		{"switch target", &rmspb.UpdateFirmwareRequest{RackId: sw.RackID, NodeId: sw.ID, Filename: pkg, Target: "/redfish/v1/x"},
			rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_TARGET_NOT_FOUND, "switch target"},
	}
	for _, c := range cases {
		resp, err := f.client.UpdateFirmware(rpcContext(t), c.req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetErrorCode() != c.code || resp.GetJobId() != "" ||
			!strings.Contains(resp.GetMessage(), c.says) {
			t.Errorf("%s: %v, want FAILURE %v saying %q", c.name, resp, c.code, c.says)
		}
	}
	// A node another job holds: UPDATE_IN_PROGRESS naming that job.
	holder := f.holdNode(t, n)
	resp, err := f.client.UpdateFirmware(rpcContext(t), &rmspb.UpdateFirmwareRequest{RackId: n.RackID, NodeId: n.ID, Filename: pkg})
	if err != nil || resp.GetErrorCode() != rmspb.FirmwareUpdateError_FIRMWARE_UPDATE_ERROR_UPDATE_IN_PROGRESS ||
		!strings.Contains(resp.GetMessage(), holder) {
		t.Errorf("busy node: %v %v, want UPDATE_IN_PROGRESS naming %s", resp, err, holder)
	}
}

func TestBatchUpdateFirmwareByNodeType_OneChildPerNodeOfTheType(t *testing.T) {
	f := startFirmwareRack(t, nil)
	shelves := f.ofKind(hw.KindPowerShelf)
	pkg := f.stagePackage(t, "psu-c1.09.tar", "C1.09")
	resp, err := f.client.BatchUpdateFirmwareByNodeType(rpcContext(t), &rmspb.BatchUpdateFirmwareByNodeTypeRequest{
		RackId: shelves[0].RackID, NodeType: rmspb.NodeType(shelves[0].Type), Filename: pkg, Activate: true})
	if err != nil {
		t.Fatal(err)
	}
	var sameType int
	for _, s := range shelves {
		if s.Type == shelves[0].Type {
			sameType++
		}
	}
	if resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetJobs()) != sameType {
		t.Fatalf("response %v: want %d jobs", resp, sameType)
	}
	p := f.waitFirmwareJob(t, resp.GetResponse().GetJobId())
	if p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Fatalf("parent %v %s %s", p.GetJobState(), p.GetErrorMessage(), p.GetResultJson())
	}
	if got := f.firmwareVersion(t, shelves[0], "FW_PMC_0"); got != "C1.09" {
		t.Errorf("shelf controller runs %q, want C1.09", got)
	}

	// An unknown rack, and a type the rack has none of, are refused in band.
	for _, req := range []*rmspb.BatchUpdateFirmwareByNodeTypeRequest{
		{RackId: "no-such-rack", NodeType: rmspb.NodeType(shelves[0].Type), Filename: pkg},
		{RackId: shelves[0].RackID, NodeType: rmspb.NodeType(hw.ComputeGB300Nvidia), Filename: pkg},
	} {
		resp, err := f.client.BatchUpdateFirmwareByNodeType(rpcContext(t), req)
		if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetResponse().GetJobId() != "" {
			t.Errorf("%v: %v %v, want FAILURE without a job", req, resp, err)
		}
	}
}

// withProfile is a node as a caller sends it with an inventory_profile
// attribute.
func withProfile(n hw.Node, profile string) *rmspb.NodeInfo {
	ni := NodeInfoToProto(n)
	attrs := n.Type.Descriptor()
	attrs[hw.AttrInventoryProfile] = profile
	ni.NodeDescriptor = &rmspb.NodeDescriptor{Attributes: attrs}
	return ni
}

func TestBatchUpdateFirmware_InventoryProfiles(t *testing.T) {
	f := startFirmwareRack(t, map[string][]string{"full": {"FW_BMC_0", "HGX_FW_BMC_0"}, "wants-nic": {"FW_BMC_0", "FW_NIC_9"}})
	compute := f.ofKind(hw.KindCompute)
	pkg := f.stagePackage(t, "bmc-profile.fwpkg", "GB200Nvl-26.03-1")
	targets := map[int32]*rmspb.FirmwareTargetList{int32(compute[0].Type): {Targets: []*rmspb.FirmwareTarget{{Target: "FW_BMC_0", Filename: pkg}}}}

	// Unresolved profiles: refused before any child exists; the parent
	// exists and ends Failed.
	resp, err := f.client.BatchUpdateFirmware(rpcContext(t), &rmspb.BatchUpdateFirmwareRequest{
		Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{withProfile(compute[0], "gone"), withProfile(compute[1], "")}}, FirmwareTargets: targets})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if len(resp.GetJobs()) != 0 || r.GetJobId() == "" || len(r.GetNodeResults()) != 2 || r.GetStats().GetFailedNodes() != 2 {
		t.Fatalf("unresolved profiles: %v", resp)
	}
	if !strings.Contains(r.GetNodeResults()[0].GetErrorMessage(), "inventory_profile") {
		t.Errorf("node result %q should name the profile", r.GetNodeResults()[0].GetErrorMessage())
	}
	if p := f.waitFirmwareJob(t, r.GetJobId()); p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED {
		t.Errorf("parent without children %v, want FAILED", p.GetJobState())
	}

	// A resolved profile is checked against the node's inventory: present
	// APs pass, a missing one fails the child before anything is uploaded.
	uploads := f.device(t, compute[3].ID).Uploads()
	resp, err = f.client.BatchUpdateFirmware(rpcContext(t), &rmspb.BatchUpdateFirmwareRequest{
		Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{withProfile(compute[2], "full"), withProfile(compute[3], "wants-nic")}}, FirmwareTargets: targets})
	if err != nil || len(resp.GetJobs()) != 2 {
		t.Fatalf("resolved profiles: %v %v", resp, err)
	}
	ok := f.waitFirmwareJob(t, resp.GetJobs()[0].GetJobId())
	bad := f.waitFirmwareJob(t, resp.GetJobs()[1].GetJobId())
	if ok.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Errorf("node with every AP: %v %s", ok.GetJobState(), ok.GetErrorMessage())
	}
	if bad.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED || !strings.Contains(bad.GetErrorMessage(), "FW_NIC_9") ||
		!strings.Contains(bad.GetResultJson(), "FailedPrecondition") {
		t.Errorf("node missing an AP: %v %q %s", bad.GetJobState(), bad.GetErrorMessage(), bad.GetResultJson())
	}
	if got := f.device(t, compute[3].ID).Uploads(); got != uploads {
		t.Errorf("%d uploads to a node that failed its profile check", got-uploads)
	}
}

func TestBatchUpdateFirmware_TargetsByNodeTypeAndDuplicates(t *testing.T) {
	f := startFirmwareRack(t, nil)
	compute := f.ofKind(hw.KindCompute)[0]
	shelf := f.ofKind(hw.KindPowerShelf)[0]
	pkg := f.stagePackage(t, "bmc-batch.fwpkg", "GB200Nvl-26.02-1")
	resp, err := f.client.BatchUpdateFirmware(rpcContext(t), &rmspb.BatchUpdateFirmwareRequest{
		Nodes: nodeSet(compute, compute, shelf),
		FirmwareTargets: map[int32]*rmspb.FirmwareTargetList{
			int32(compute.Type): {Targets: []*rmspb.FirmwareTarget{{Target: "FW_BMC_0", Filename: pkg}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	st := r.GetStats()
	if st.GetTotalNodes() != 3 || st.GetSuccessfulNodes() != 1 || st.GetFailedNodes() != 2 || len(resp.GetJobs()) != 1 {
		t.Fatalf("stats %v jobs %v", st, resp.GetJobs())
	}
	if msg := r.GetNodeResults()[1].GetErrorMessage(); !strings.Contains(msg, "duplicate") {
		t.Errorf("the node named twice: %q", msg)
	}
	if msg := r.GetNodeResults()[2].GetErrorMessage(); !strings.Contains(msg, "no firmware targets for node type") {
		t.Errorf("the shelf without targets: %q", msg)
	}
	if p := f.waitFirmwareJob(t, r.GetJobId()); p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Errorf("parent %v %s", p.GetJobState(), p.GetErrorMessage())
	}
	empty, err := f.client.BatchUpdateFirmware(rpcContext(t), &rmspb.BatchUpdateFirmwareRequest{})
	if err != nil || empty.GetResponse().GetMessage() != noNodesMessage {
		t.Errorf("no nodes: %v %v", empty, err)
	}
}
