package rmsserver

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
)

// history reads the apply history of one object.
func (f *firmwareRack) history(t *testing.T, objectID string) []*rmspb.FirmwareObjectHistoryRecord {
	t.Helper()
	resp, err := f.client.GetFirmwareObjectHistory(rpcContext(t), &rmspb.GetFirmwareObjectHistoryRequest{ObjectId: objectID})
	if err != nil {
		t.Fatalf("GetFirmwareObjectHistory: %v", err)
	}
	return resp.GetRecords()
}

// AddFirmwareObject without a hardware type is refused before anything is
// stored or fetched, as upstream's handle_add_firmware_object; the first
// object of a hardware type becomes its default without set_default.
func TestAddFirmwareObject_HardwareTypeIsRequiredAndTheFirstOfATypeIsItsDefault(t *testing.T) {
	cs := startCatalog(t, catalogOptions{})
	rel := cs.publish(simrelease.Options{})
	_, err := cs.client.AddFirmwareObject(rpcContext(t), &rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON})
	if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != "hardware_type is required" {
		t.Fatalf("no hardware_type: %v, want INVALID_ARGUMENT \"hardware_type is required\"", err)
	}
	list, err := cs.client.ListFirmwareObjects(rpcContext(t), &rmspb.ListFirmwareObjectsRequest{})
	if err != nil || len(list.GetObjects()) != 0 || len(cs.art.Requests()) != 0 {
		t.Fatalf("a refused add left objects %v or requests %v (%v)", objectIDs(list.GetObjects()), cs.art.Requests(), err)
	}

	first := cs.add(&rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "gb200-nvl"})
	second := cs.add(&rmspb.AddFirmwareObjectRequest{
		ConfigJson: cs.publish(simrelease.Options{Milestone: "1.3.8"}).ConfigJSON, HardwareType: "gb200-nvl"})
	other := cs.add(&rmspb.AddFirmwareObjectRequest{
		ConfigJson: cs.publish(simrelease.Options{Milestone: "1.3.9"}).ConfigJSON, HardwareType: "gb300-nvl"})
	if !first.GetIsDefault() || second.GetIsDefault() || !other.GetIsDefault() {
		t.Errorf("is_default: first %v, second of the same type %v, first of another type %v; want true, false, true",
			first.GetIsDefault(), second.GetIsDefault(), other.GetIsDefault())
	}
	if !cs.getObject(first.GetId()).GetIsDefault() {
		t.Errorf("%s is no longer the default once another object of its type was added", first.GetId())
	}
}

// An object named by id whose hardware type is not the request's is
// FAILED_PRECONDITION with upstream's message (resolve_requested_firmware),
// for both ApplyStored RPCs; nothing starts.
func TestApplyStored_AnObjectOfAnotherHardwareTypeIsFailedPrecondition(t *testing.T) {
	f := startFirmwareRack(t, nil)
	f.addRelease(t) // gb200-nvl
	compute, sw := f.ofKind(hw.KindCompute)[0], f.ofKind(hw.KindSwitch)[0]
	want := "firmware object " + f.release.ID + " hardware type gb200-nvl does not match request hardware type gb300-nvl"
	_, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		ObjectId: f.release.ID, HardwareType: "gb300-nvl", Nodes: nodeSet(compute)})
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != want {
		t.Errorf("ApplyStoredFirmwareObject: %v, want FAILED_PRECONDITION %q", err, want)
	}
	_, err = f.client.ApplyStoredSwitchSystemImage(rpcContext(t), &rmspb.ApplyStoredSwitchSystemImageRequest{
		ObjectId: f.release.ID, HardwareType: "gb300-nvl", Nodes: nodeSet(sw)})
	if status.Code(err) != codes.FailedPrecondition || status.Convert(err).Message() != want {
		t.Errorf("ApplyStoredSwitchSystemImage: %v, want FAILED_PRECONDITION %q", err, want)
	}
	if h := f.history(t, f.release.ID); len(h) != 0 {
		t.Errorf("refused applies were recorded: %v", h)
	}
	// A request of hardware type any asks for no particular type.
	resp, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		ObjectId: f.release.ID, HardwareType: "any", Nodes: nodeSet(compute)})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("hardware_type any: %v %v", resp, err)
	}
	f.waitFirmwareJob(t, resp.GetResponse().GetJobId())
}

// An object still downloading fails the batch in band, the reply echoing
// the object it resolved (here the default of the hardware type): no gRPC
// code, no job, no history.
func TestApplyStoredSwitchSystemImage_AnObjectStillDownloadingFailsInBand(t *testing.T) {
	f := startFirmwareRack(t, nil)
	sw := f.ofKind(hw.KindSwitch)[:2]
	f.art.SetFault(f.release.NVOS.Path, artifactsim.Fault{Hold: true})
	if _, err := f.client.AddFirmwareObject(rpcContext(t), &rmspb.AddFirmwareObjectRequest{
		ConfigJson: f.release.ConfigJSON, HardwareType: "gb200-nvl"}); err != nil {
		t.Fatal(err)
	}
	resp, err := f.client.ApplyStoredSwitchSystemImage(rpcContext(t), &rmspb.ApplyStoredSwitchSystemImageRequest{
		HardwareType: "gb200-nvl", Nodes: nodeSet(sw...)})
	if err != nil {
		t.Fatalf("ApplyStoredSwitchSystemImage: %v, want an in-band failure", err)
	}
	r := resp.GetResponse()
	if resp.GetObjectId() != f.release.ID || r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetJobId() != "" ||
		len(resp.GetJobs()) != 0 || !strings.Contains(r.GetMessage(), f.release.ID) || !strings.Contains(r.GetMessage(), "is not available") {
		t.Errorf("reply %v", resp)
	}
	if len(r.GetNodeResults()) != 2 || r.GetStats().GetFailedNodes() != 2 {
		t.Errorf("node results %v stats %v, want both switches failed", r.GetNodeResults(), r.GetStats())
	}
	f.art.Release(1)
	if h := f.history(t, f.release.ID); len(h) != 0 {
		t.Errorf("a refused apply was recorded: %v", h)
	}
}

// The history records an apply only when the whole batch was admitted
// (upstream's record_apply_if_success), and then lists every requested
// node, those the component filters leave out included.
func TestApplyStoredFirmwareObject_HistoryOnlyForAFullyAdmittedBatchListingEveryRequestedNode(t *testing.T) {
	f := startFirmwareRack(t, nil)
	f.addRelease(t)
	compute, shelf := f.ofKind(hw.KindCompute), f.ofKind(hw.KindPowerShelf)[0]
	f.holdNode(t, compute[0])
	partial, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		RackId: compute[0].RackID, ObjectId: f.release.ID, Nodes: nodeSet(compute[0], compute[1])})
	if err != nil {
		t.Fatal(err)
	}
	if r := partial.GetResponse(); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(partial.GetJobs()) != 1 {
		t.Fatalf("apply with a held node: %v", partial)
	}
	f.waitFirmwareJob(t, partial.GetResponse().GetJobId())
	if h := f.history(t, f.release.ID); len(h) != 0 {
		t.Fatalf("a batch with a node refused was recorded: %v", h)
	}

	full, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		RackId: compute[2].RackID, ObjectId: f.release.ID, FirmwareType: "Prod", Nodes: nodeSet(compute[2], shelf),
		ComponentFilters: map[int32]*rmspb.FirmwareObjectComponentFilter{int32(compute[2].Type): {Components: []string{"BMC"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if r := full.GetResponse(); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(full.GetJobs()) != 1 {
		t.Fatalf("apply: %v", full)
	}
	f.waitFirmwareJob(t, full.GetResponse().GetJobId())
	h := f.history(t, f.release.ID)
	if len(h) != 1 {
		t.Fatalf("history %v, want one record", h)
	}
	if got := strings.Join(h[0].GetNodeIds(), ","); got != compute[2].ID+","+shelf.ID || h[0].GetRackId() != compute[2].RackID ||
		h[0].GetFirmwareType() != "prod" || h[0].GetHardwareType() != "gb200-nvl" {
		t.Errorf("record %v, want nodes %s,%s (every node requested)", h[0], compute[2].ID, shelf.ID)
	}
}

// ApplyStoredSwitchSystemImage records nothing when a switch is refused.
func TestApplyStoredSwitchSystemImage_ABusySwitchMeansNoHistory(t *testing.T) {
	f := startFirmwareRack(t, nil)
	f.addRelease(t)
	sw := f.ofKind(hw.KindSwitch)[:2]
	f.setBuild(t, olderBuild, "", sw...)
	holder := f.holdNode(t, sw[0])
	resp, err := f.client.ApplyStoredSwitchSystemImage(rpcContext(t), &rmspb.ApplyStoredSwitchSystemImageRequest{
		RackId: sw[0].RackID, ObjectId: f.release.ID, Nodes: nodeSet(sw...)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(resp.GetJobs()) != 1 ||
		!strings.Contains(r.GetNodeResults()[0].GetErrorMessage(), holder) {
		t.Fatalf("apply with a held switch: %v", resp)
	}
	f.waitImageJob(t, r.GetJobId())
	if h := f.history(t, f.release.ID); len(h) != 0 {
		t.Errorf("a batch with a switch refused was recorded: %v", h)
	}
}

// A manifest whose ProductName names no GB200, GB300 or VR family is
// accepted, its id still {ProductName}_{Milestone}, and its components go
// to the node types their board SKU's Type names (upstream's
// lookup_key_for_device_type), so applying it updates each node with its
// own kind's packages.
func TestApplyStoredFirmwareObject_RoutesBySKUTypeWhateverTheProduct(t *testing.T) {
	f := startFirmwareRack(t, nil)
	rel, err := simrelease.Publish(f.art, simrelease.Options{Product: "ACME-RACK", Milestone: "7.1", Size: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	add, err := f.client.AddFirmwareObject(rpcContext(t), &rmspb.AddFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, HardwareType: "acme"})
	if err != nil {
		t.Fatalf("AddFirmwareObject of a product naming no family: %v", err)
	}
	if add.GetObject().GetId() != "ACME-RACK_7.1" {
		t.Errorf("id %q, want ACME-RACK_7.1", add.GetObject().GetId())
	}
	kinds := map[string]string{}
	for _, dc := range add.GetObject().GetMetadata().GetDeviceComponents() {
		role := dc.GetNodeDescriptor().GetAttributes()[hw.AttrRole]
		if prev, ok := kinds[role]; ok && prev != dc.GetDeviceType() {
			t.Errorf("%s: device type %q and %q", role, prev, dc.GetDeviceType())
		}
		kinds[role] = dc.GetDeviceType()
	}
	if kinds["compute"] != "Compute Node" || kinds["switch"] != "Switch Tray" || kinds["power_shelf"] != "Power Shelf" {
		t.Errorf("device types by role %v", kinds)
	}
	eventuallyRPC(t, "object available", func() bool {
		resp, err := f.client.GetFirmwareObject(rpcContext(t), &rmspb.GetFirmwareObjectRequest{Id: rel.ID})
		return err == nil && resp.GetObject().GetAvailable()
	})
	compute, sw, shelf := f.ofKind(hw.KindCompute)[0], f.ofKind(hw.KindSwitch)[0], f.ofKind(hw.KindPowerShelf)[0]
	resp, err := f.client.ApplyStoredFirmwareObject(rpcContext(t), &rmspb.ApplyStoredFirmwareObjectRequest{
		RackId: compute.RackID, HardwareType: "acme", Nodes: nodeSet(compute, sw, shelf)})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.GetResponse(); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetJobs()) != 3 || resp.GetObjectId() != rel.ID {
		t.Fatalf("apply: %v", resp)
	}
	if p := f.waitFirmwareJob(t, resp.GetResponse().GetJobId()); p.GetJobState() != rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED {
		t.Fatalf("parent %v: %s %s", p.GetJobState(), p.GetErrorMessage(), p.GetResultJson())
	}
	for _, j := range resp.GetJobs() {
		if child := f.waitFirmwareJob(t, j.GetJobId()); resultStatus(t, child.GetResultJson()) != "completed" {
			t.Errorf("%s: %s", j.GetNodeId(), child.GetResultJson())
		}
	}
	if got := f.firmwareVersion(t, compute, "FW_BMC_0"); got != rel.ComputeBMC.Version {
		t.Errorf("compute BMC %q, want the compute package's %q", got, rel.ComputeBMC.Version)
	}
	if got := f.firmwareVersion(t, sw, "BMC"); got != rel.SwitchBMC.Version {
		t.Errorf("switch BMC %q, want the switch package's %q", got, rel.SwitchBMC.Version)
	}
}
