package rmsserver

import (
	"context"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// holdNode starts a job on n as a firmware update admits it (its device
// keys with it) that runs until the test ends or release is closed. It
// returns the job id and release.
func (s *simRack) holdNode(t *testing.T, n hw.Node) (string, chan struct{}) {
	t.Helper()
	release := make(chan struct{})
	ctx := rpcContext(t)
	job, err := s.engine.Create(ctx, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: n.RackID, NodeID: n.ID, Devices: devicesOf(ctx, n)},
		messages.WorkflowFunc(func(ctx context.Context, r messages.Reporter) {
			r.Progress("flashing")
			select {
			case <-release:
				_ = r.Complete("Completed", "")
			case <-ctx.Done():
				_ = r.Fail(messages.NewFailure(messages.ErrorOther, "cancelled"))
			}
		}), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		_ = s.engine.Wait(context.Background(), job.ID)
	})
	return job.ID, release
}

// holderText is the refusal naming job id on rack/node.
func holderText(n hw.Node, id string) string {
	return "job already in progress for rack " + n.RackID + " node " + n.ID + " (job_id " + id + ")"
}

// TestCreateNodesRefusesAnAliasOfARegisteredBMC: the BMC of a registered
// tray offered again under another rack and node id is refused in-band,
// naming the node it is registered as; a new node of the rack is still
// registered while a job holds one of its trays.
func TestCreateNodesRefusesAnAliasOfARegisteredBMC(t *testing.T) {
	s := startSimRack(t)
	tray := s.ofKind(hw.KindCompute)[4]
	s.holdNode(t, tray)
	alias := tray
	alias.RackID, alias.ID = "rack-900", "rack-900-compute-05"
	fresh := hw.Node{ID: tray.RackID + "-compute-99", RackID: tray.RackID, Type: tray.Type,
		BMC: &hw.Endpoint{IP: "127.0.0.1", Port: 1, Credentials: hw.UserPass("admin", "pw")}}
	resp, err := s.client.CreateNodes(rpcContext(t), &rmspb.CreateNodesRequest{Nodes: nodeSet(alias, fresh)})
	if err != nil {
		t.Fatal(err)
	}
	want := alias.ID + ": bmc endpoint " + tray.BMC.Addr(443) + " is already registered as node " + tray.ID + " of rack " + tray.RackID +
		"\n1 added, 1 failed"
	if r := resp.GetResponse(); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetMessage() != want {
		t.Fatalf("CreateNodes = %v, want the message %q", r, want)
	}
	if _, err := s.racks.Node("rack-900", alias.ID); err == nil {
		t.Fatal("the alias was registered")
	}
	if _, err := s.racks.Node(fresh.RackID, fresh.ID); err != nil {
		t.Fatalf("a new node of a rack with a held tray: %v", err)
	}
}

// TestUpdateNodeOfAHeldNodeIsRefusedNamingTheHolder: a flash in progress
// never has its device swapped; another node of the rack is updated
// meanwhile, and the held one once the job ends.
func TestUpdateNodeOfAHeldNodeIsRefusedNamingTheHolder(t *testing.T) {
	s := startSimRack(t)
	trays := s.ofKind(hw.KindCompute)
	held, other := trays[0], trays[1]
	id, release := s.holdNode(t, held)
	update := func(n hw.Node, ip string) *rmspb.OperationResponse {
		t.Helper()
		ep := *n.BMC
		ep.IP = ip
		info := NodeInfoToProto(hw.Node{ID: n.ID, RackID: n.RackID, Type: n.Type, BMC: &ep})
		resp, err := s.client.UpdateNode(rpcContext(t), &rmspb.UpdateNodeRequest{RackId: n.RackID, NodeId: n.ID,
			UpdateInfo: &rmspb.NodeUpdateInfo{BmcEndpoint: info.GetBmcEndpoint()}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResponse()
	}
	if r := update(held, "127.0.9.1"); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetMessage() != holderText(held, id) {
		t.Fatalf("UpdateNode of the held node = %v", r)
	}
	if n, _ := s.racks.Node(held.RackID, held.ID); n.BMC.IP != held.BMC.IP {
		t.Fatalf("a refused update changed the BMC to %s", n.BMC.IP)
	}
	if r := update(other, "127.0.9.2"); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("UpdateNode of another node of the rack = %v", r)
	}
	close(release)
	if err := s.engine.Wait(waitContext(t), id); err != nil {
		t.Fatal(err)
	}
	if r := update(held, "127.0.9.1"); r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("UpdateNode once the job ended = %v", r)
	}
}

// TestBatchSetPowerStateRefusesAnAliasOfAHeldBMC: a caller-supplied node
// naming a held tray's BMC under another rack and node id fails naming the
// holder, and its BMC is not touched.
func TestBatchSetPowerStateRefusesAnAliasOfAHeldBMC(t *testing.T) {
	s := startSimRack(t)
	trays := s.ofKind(hw.KindCompute)
	tray := trays[4]
	id, _ := s.holdNode(t, tray)
	alias := tray
	alias.RackID, alias.ID = "rack-900", "rack-900-compute-05"
	before := len(s.device(t, tray.ID).Resets())
	resp, err := s.client.BatchSetPowerState(rpcContext(t), &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(alias, trays[5]),
		Operation: rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStats().GetFailedNodes() != 1 || r.GetStats().GetSuccessfulNodes() != 1 ||
		r.GetNodeResults()[0].GetNodeId() != alias.ID || r.GetNodeResults()[0].GetErrorMessage() != holderText(tray, id) {
		t.Fatalf("BatchSetPowerState with an alias = %v", r)
	}
	if len(s.device(t, tray.ID).Resets()) != before {
		t.Fatal("the held tray's BMC was reset through its alias")
	}
}

// TestPowerDomainOverGRPC: a shelf OFF and a cold reboot are refused while
// a tray of the rack is held (one the cold reboot does not list), naming
// the holder; a tray's own power change is not.
func TestPowerDomainOverGRPC(t *testing.T) {
	s := startSimRack(t)
	trays, shelf := s.ofKind(hw.KindCompute), s.ofKind(hw.KindPowerShelf)[0]
	held := trays[3]
	id, _ := s.holdNode(t, held)
	ctx := rpcContext(t)
	off, err := s.client.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: shelf.RackID, NodeId: shelf.ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_OFF})
	if err != nil || off.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("shelf OFF while a tray is held = %v, %v", off, err)
	}
	on, err := s.client.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: trays[0].RackID, NodeId: trays[0].ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if err != nil || on.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("a tray's power change beside the held tray = %v, %v", on, err)
	}
	batch, err := s.client.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(shelf),
		Operation: rmspb.PowerOperation_POWER_OPERATION_RESET})
	if err != nil || batch.GetResponse().GetStats().GetFailedNodes() != 1 ||
		batch.GetResponse().GetNodeResults()[0].GetErrorMessage() != holderText(held, id) {
		t.Fatalf("batch shelf cycle while a tray is held = %v, %v", batch.GetResponse(), err)
	}
	var listed []hw.Node
	for _, n := range s.nodes {
		if n.ID != held.ID {
			listed = append(listed, n)
		}
	}
	cr, err := s.client.ExecuteColdReboot(ctx, quickColdReboot(nodeSet(listed...)))
	if err != nil || cr.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || cr.GetResponse().GetJobId() != "" ||
		cr.GetResponse().GetMessage() != "cold reboot not started: "+holderText(held, id) {
		t.Fatalf("cold reboot while an unlisted tray is held = %v, %v", cr.GetResponse(), err)
	}
}

// TestNothingIsAdmittedInARackUnderColdReboot: while a cold reboot runs, a
// firmware job and a batch power change on a node of the rack it does not
// list are refused naming it, and so is an alias of a node it lists.
func TestNothingIsAdmittedInARackUnderColdReboot(t *testing.T) {
	s := startSimRack(t)
	trays := s.ofKind(hw.KindCompute)
	unlisted := trays[len(trays)-1]
	listed := make([]hw.Node, 0, len(s.nodes))
	for _, n := range s.nodes {
		if n.ID != unlisted.ID {
			listed = append(listed, n)
		}
	}
	req := quickColdReboot(nodeSet(listed...))
	req.PrestageShutdownFloorSeconds = u32(1200) // the longest accepted: it waits there until cancelled
	resp, err := s.client.ExecuteColdReboot(rpcContext(t), req)
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("ExecuteColdReboot = %v, %v", resp.GetResponse(), err)
	}
	id := resp.GetResponse().GetJobId()
	t.Cleanup(func() {
		_, _ = s.engine.Cancel(context.Background(), id)
		_ = s.engine.Wait(context.Background(), id)
	})
	want := "rack " + unlisted.RackID + " is busy: cold reboot job " + id + " in progress; retry when it finishes"
	ctx := rpcContext(t)
	_, err = s.engine.Create(ctx, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: unlisted.RackID, NodeID: unlisted.ID,
		Devices: devicesOf(ctx, unlisted)}, messages.WorkflowFunc(func(context.Context, messages.Reporter) {}), nil)
	if err == nil || err.Error() != want {
		t.Fatalf("firmware job on an unlisted tray during the cold reboot: %v, want %q", err, want)
	}
	alias := trays[0]
	alias.RackID, alias.ID = "rack-900", "rack-900-compute-01"
	batch, err := s.client.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(unlisted, alias),
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if err != nil {
		t.Fatal(err)
	}
	r := batch.GetResponse()
	if r.GetStats().GetFailedNodes() != 2 || r.GetNodeResults()[0].GetErrorMessage() != want ||
		!strings.Contains(r.GetNodeResults()[1].GetErrorMessage(), "node "+trays[0].ID+" (job_id ") {
		t.Fatalf("BatchSetPowerState in a rack under a cold reboot = %v", r)
	}
}

// TestUpdateFirmwareIsRefusedInARackUnderColdReboot: the firmware RPC on a
// tray the cold reboot does not list is refused in-band, naming the cold
// reboot, and starts no job.
func TestUpdateFirmwareIsRefusedInARackUnderColdReboot(t *testing.T) {
	f := startFirmwareRack(t, nil)
	trays := f.ofKind(hw.KindCompute)
	unlisted := trays[len(trays)-1]
	var listed []hw.Node
	for _, n := range f.nodes {
		if n.ID != unlisted.ID {
			listed = append(listed, n)
		}
	}
	req := quickColdReboot(nodeSet(listed...))
	req.PrestageShutdownFloorSeconds = u32(1200) // the longest accepted: it waits there until cancelled
	cr, err := f.client.ExecuteColdReboot(rpcContext(t), req)
	if err != nil || cr.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("ExecuteColdReboot = %v, %v", cr.GetResponse(), err)
	}
	id := cr.GetResponse().GetJobId()
	t.Cleanup(func() {
		_, _ = f.engine.Cancel(context.Background(), id)
		_ = f.engine.Wait(context.Background(), id)
	})
	pkg := f.stagePackage(t, "bmc-direct.fwpkg", "GB200Nvl-26.01-9")
	resp, err := f.client.UpdateFirmware(rpcContext(t), &rmspb.UpdateFirmwareRequest{
		RackId: unlisted.RackID, NodeId: unlisted.ID, Filename: pkg, Target: "FW_BMC_0", Activate: true})
	want := "rack " + unlisted.RackID + " is busy: cold reboot job " + id + " in progress; retry when it finishes"
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetJobId() != "" || !strings.Contains(resp.GetMessage(), want) {
		t.Fatalf("UpdateFirmware during the cold reboot = %v, %v; want a refusal saying %q", resp, err, want)
	}
}
