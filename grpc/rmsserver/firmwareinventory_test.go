package rmsserver

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/messages"
)

// distinctFirmware gives every node of the rack versions of its own (the
// simulator starts every device of a kind on the same ones), so that a
// reply mixing nodes up cannot pass.
func distinctFirmware(t *testing.T, s *simRack) {
	t.Helper()
	for _, n := range s.nodes {
		if n.Type.Kind() == hw.KindSwitch {
			s.nvos(t, n.ID).SetFirmware(nvossim.ComponentBMC, "88.0002."+n.ID)
			continue
		}
		d := s.device(t, n.ID)
		if err := d.SetFirmware(d.Components()[0], "1.0+"+n.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// simFirmware is what the simulated device of a node runs, by component.
func simFirmware(t *testing.T, s *simRack, n hw.Node) map[string]string {
	t.Helper()
	if n.Type.Kind() == hw.KindSwitch {
		return s.nvos(t, n.ID).Firmware()
	}
	d := s.device(t, n.ID)
	out := map[string]string{}
	for _, id := range d.Components() {
		installed, _, err := d.Firmware(id)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = installed
	}
	return out
}

// checkFirmwareList compares a node's firmware list with what its simulated
// device runs: every component once, its version, its update target (the
// Redfish inventory URI, or a switch's NVUE component name) and health
// (the BMC's, or "Unknown" where NVUE reports none).
func checkFirmwareList(t *testing.T, s *simRack, n hw.Node, list []*rmspb.FirmwareInventoryInfo) {
	t.Helper()
	want := simFirmware(t, s, n)
	if len(list) != len(want) {
		t.Errorf("%s: %d components, the device runs %d (%v)", n.ID, len(list), len(want), want)
		return
	}
	for _, fw := range list {
		version, ok := want[fw.GetName()]
		target, health := redfish.FirmwareInventoryPath+"/"+fw.GetName(), "OK"
		if n.Type.Kind() == hw.KindSwitch {
			target, health = fw.GetName(), "Unknown"
		}
		if !ok || fw.GetVersion() != version || fw.GetTarget() != target || fw.GetHealth() != health || !fw.GetUpdateable() {
			t.Errorf("%s: %v; the device runs %q", n.ID, fw, version)
		}
		delete(want, fw.GetName())
	}
}

// A whole GB200 rack read in one batch: every compute tray, switch and
// power shelf with each component the simulator runs, in request order,
// typed as upstream types them. A read takes no job and no lease.
func TestBatchGetFirmwareInventoryOfAWholeRack(t *testing.T) {
	s := startSimRack(t)
	distinctFirmware(t, s)
	before, err := s.engine.Actors(rpcContext(t))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.client.BatchGetFirmwareInventory(rpcContext(t), &rmspb.BatchGetFirmwareInventoryRequest{Nodes: nodeSet(s.nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetMessage() != "Firmware inventory retrieved for 35/35 nodes" ||
		r.GetStats().GetTotalNodes() != 35 || r.GetStats().GetSuccessfulNodes() != 35 || r.GetStats().GetFailedNodes() != 0 ||
		r.GetJobId() != "" || len(r.GetNodeResults()) != 35 || len(resp.GetNodes()) != 35 {
		t.Fatalf("BatchGetFirmwareInventory(rack) = %v, %d inventories", r, len(resp.GetNodes()))
	}
	types := map[string]int32{}
	for i, n := range s.nodes {
		if res := r.GetNodeResults()[i]; res.GetNodeId() != n.ID || res.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS ||
			res.GetErrorMessage() != "" {
			t.Errorf("result %d = %v, want SUCCESS for %s", i, res, n.ID)
		}
		inv := resp.GetNodes()[i]
		if inv.GetNodeId() != n.ID {
			t.Fatalf("inventory %d is of %s, want %s", i, inv.GetNodeId(), n.ID)
		}
		checkFirmwareList(t, s, n, inv.GetFirmwareList())
		for _, fw := range inv.GetFirmwareList() {
			types[n.Type.Kind().String()+"/"+fw.GetName()] = fw.GetFirmwareType()
		}
	}
	// Upstream's firmware_type numbers: 0 unknown, 1 BMC, 2 BIOS, 3 CPLD,
	// 4 FPGA, 5 NIC, 6 HBA, 7 HMC.
	for key, want := range map[string]int32{
		"compute/FW_BMC_0": 1, "compute/FW_ERoT_BMC_0": 1, "compute/HGX_FW_BMC_0": 1, "compute/FW_UEFI_0": 2,
		"compute/FW_CPLD_0": 3, "compute/HGX_FW_GPU_0": 7, "power_shelf/FW_PMC_0": 0, "power_shelf/FW_PSU_0": 0,
		"switch/BMC": 1, "switch/BIOS": 2, "switch/CPLD1": 3, "switch/FPGA": 4, "switch/EROT": 0,
	} {
		if got, ok := types[key]; !ok || got != want {
			t.Errorf("%s: firmware_type %d (listed %v), want %d", key, got, ok, want)
		}
	}
	after, err := s.engine.Actors(rpcContext(t))
	if err != nil || len(after.Actors) != len(before.Actors) || after.HeldNodes != 0 {
		t.Fatalf("a read changed the job engine: %d actors before, %+v after, %v", len(before.Actors), after, err)
	}
}

// A node whose BMC or NVOS refuses the credentials fails on its own; the
// others are read, and the reply keeps both the inventories and the
// failures.
func TestFirmwareInventoryWithWrongCredentials(t *testing.T) {
	s := startSimRack(t)
	compute, sw, shelf := s.ofKind(hw.KindCompute)[1], s.ofKind(hw.KindSwitch)[2], s.ofKind(hw.KindPowerShelf)[0]
	s.device(t, compute.ID).SetCredentials("admin", "rotated-elsewhere")
	s.device(t, shelf.ID).SetCredentials("admin", "rotated-elsewhere")
	s.nvos(t, sw.ID).RejectLogins(true)
	refused := map[string]bool{compute.ID: true, sw.ID: true, shelf.ID: true}

	resp, err := s.client.BatchGetFirmwareInventory(rpcContext(t), &rmspb.BatchGetFirmwareInventoryRequest{Nodes: nodeSet(s.nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetStats().GetTotalNodes() != 35 ||
		r.GetStats().GetSuccessfulNodes() != 32 || r.GetStats().GetFailedNodes() != 3 || len(resp.GetNodes()) != 32 {
		t.Fatalf("response = %v, %d inventories", r, len(resp.GetNodes()))
	}
	prefix := "Firmware inventory retrieved for 32/35 nodes; failed: node_id=" + compute.ID + ": "
	if msg := r.GetMessage(); !strings.HasPrefix(msg, prefix) || strings.Count(msg, "node_id=") != 3 ||
		!strings.Contains(msg, "; node_id="+sw.ID+": ") || !strings.Contains(msg, "; node_id="+shelf.ID+": ") {
		t.Fatalf("message = %q", msg)
	}
	for i, res := range r.GetNodeResults() {
		failed := res.GetStatus() == rmspb.ReturnCode_RETURN_CODE_FAILURE
		if res.GetNodeId() != s.nodes[i].ID || failed != refused[res.GetNodeId()] {
			t.Errorf("result %d = %v", i, res)
		}
		if failed && !strings.Contains(res.GetErrorMessage(), "401") {
			t.Errorf("%s: %q does not say 401", res.GetNodeId(), res.GetErrorMessage())
		}
	}
	for _, inv := range resp.GetNodes() {
		if refused[inv.GetNodeId()] {
			t.Errorf("an inventory for refused node %s", inv.GetNodeId())
		}
	}
	if strings.Contains(r.String(), "rotated-elsewhere") {
		t.Fatal("a password leaked into the response")
	}

	rack, err := s.client.GetRackFirmwareInventory(rpcContext(t), &rmspb.GetRackFirmwareInventoryRequest{RackId: compute.RackID})
	if err != nil || rack.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(rack.GetNodes()) != 32 {
		t.Fatalf("GetRackFirmwareInventory = %v, %d nodes, %v", rack.GetStatus(), len(rack.GetNodes()), err)
	}
	for _, inv := range rack.GetNodes() {
		if refused[inv.GetNodeId()] {
			t.Errorf("rack inventory lists refused node %s", inv.GetNodeId())
		}
	}
	for _, n := range []hw.Node{compute, sw, shelf} {
		one, err := s.client.GetNodeFirmwareInventory(rpcContext(t), &rmspb.GetNodeFirmwareInventoryRequest{RackId: n.RackID, NodeId: n.ID})
		if err != nil || one.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(one.GetFirmwareList()) != 0 {
			t.Errorf("GetNodeFirmwareInventory(%s) = %v, %v", n.ID, one, err)
		}
	}
}

// The registered-node read: each kind of node, then what upstream answers
// FAILURE with an empty list for. It takes no lease: a node and rack a
// power operation holds are still read.
func TestGetNodeFirmwareInventory(t *testing.T) {
	s := startSimRack(t)
	distinctFirmware(t, s)
	compute := s.ofKind(hw.KindCompute)[5]
	l, err := s.engine.Lease(rpcContext(t), messages.AcquireLease{ID: "held-by-test", Operation: "SetPowerState",
		Racks: []string{compute.RackID}, Nodes: []messages.NodeRef{{RackID: compute.RackID, NodeID: compute.ID}}, TTL: time.Minute})
	if err != nil || l.Err != nil {
		t.Fatalf("lease: %v, %v", l.Err, err)
	}
	for _, n := range []hw.Node{compute, s.ofKind(hw.KindSwitch)[4], s.ofKind(hw.KindPowerShelf)[7]} {
		resp, err := s.client.GetNodeFirmwareInventory(rpcContext(t), &rmspb.GetNodeFirmwareInventoryRequest{RackId: n.RackID, NodeId: n.ID})
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
			t.Fatalf("GetNodeFirmwareInventory(%s) = %v, %v", n.ID, resp, err)
		}
		checkFirmwareList(t, s, n, resp.GetFirmwareList())
	}

	// Registered without a host endpoint, a switch cannot be read: refused
	// without contacting its BMC or NVOS.
	sw := s.ofKind(hw.KindSwitch)[0]
	bmcOnly := sw
	bmcOnly.ID, bmcOnly.Host = "switch-bmc-only", nil
	// Its BMC is registered under one name at a time.
	if err := s.racks.Delete(sw.RackID, sw.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.racks.Create([]hw.Node{bmcOnly})[0]; err != nil {
		t.Fatal(err)
	}
	bmcRequests, nvueRequests := s.device(t, sw.ID).Requests(), s.nvos(t, sw.ID).NVUERequests()
	for _, req := range []*rmspb.GetNodeFirmwareInventoryRequest{
		{RackId: compute.RackID, NodeId: "switch-bmc-only"},
		{RackId: compute.RackID, NodeId: "ghost"},
		{RackId: "no-such-rack", NodeId: compute.ID},
	} {
		resp, err := s.client.GetNodeFirmwareInventory(rpcContext(t), req)
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(resp.GetFirmwareList()) != 0 {
			t.Errorf("GetNodeFirmwareInventory(%v) = %v, %v", req, resp, err)
		}
	}
	// The reply has no message field: a missing id is INVALID_ARGUMENT,
	// which says which.
	for _, tc := range []struct {
		req  *rmspb.GetNodeFirmwareInventoryRequest
		want string
	}{
		{&rmspb.GetNodeFirmwareInventoryRequest{RackId: compute.RackID}, "node_id is required"},
		{&rmspb.GetNodeFirmwareInventoryRequest{NodeId: compute.ID}, "rack_id is required"},
		{&rmspb.GetNodeFirmwareInventoryRequest{}, "rack_id is required"},
	} {
		_, err := s.client.GetNodeFirmwareInventory(rpcContext(t), tc.req)
		if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != tc.want {
			t.Errorf("GetNodeFirmwareInventory(%v) = %v, want INVALID_ARGUMENT %q", tc.req, err, tc.want)
		}
	}
	if s.device(t, sw.ID).Requests() != bmcRequests || s.nvos(t, sw.ID).NVUERequests() != nvueRequests {
		t.Fatal("a switch registered without a host endpoint was contacted")
	}
}

// The rack read lists every registered node of the rack, by node id, each
// with what its device runs. Upstream: an unknown rack is FAILURE, a rack
// whose nodes were all deleted is SUCCESS with none.
func TestGetRackFirmwareInventory(t *testing.T) {
	s := startSimRack(t)
	distinctFirmware(t, s)
	rack := s.nodes[0].RackID
	resp, err := s.client.GetRackFirmwareInventory(rpcContext(t), &rmspb.GetRackFirmwareInventoryRequest{RackId: rack})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetNodes()) != 35 {
		t.Fatalf("GetRackFirmwareInventory = %v, %d nodes, %v", resp.GetStatus(), len(resp.GetNodes()), err)
	}
	byID := map[string]hw.Node{}
	for _, n := range s.nodes {
		byID[n.ID] = n
	}
	for i, inv := range resp.GetNodes() {
		if i > 0 && inv.GetNodeId() <= resp.GetNodes()[i-1].GetNodeId() {
			t.Errorf("node %d (%s) is out of order", i, inv.GetNodeId())
		}
		n, ok := byID[inv.GetNodeId()]
		if !ok {
			t.Fatalf("inventory of %s, not a node of the rack", inv.GetNodeId())
		}
		checkFirmwareList(t, s, n, inv.GetFirmwareList())
		delete(byID, n.ID)
	}

	none, err := s.client.GetRackFirmwareInventory(rpcContext(t), &rmspb.GetRackFirmwareInventoryRequest{RackId: "no-such-rack"})
	if err != nil || none.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(none.GetNodes()) != 0 {
		t.Errorf("GetRackFirmwareInventory(no-such-rack) = %v, %v", none, err)
	}
	// The reply has no message field: no rack_id is INVALID_ARGUMENT.
	if _, err := s.client.GetRackFirmwareInventory(rpcContext(t), &rmspb.GetRackFirmwareInventoryRequest{}); status.Code(err) != codes.InvalidArgument ||
		status.Convert(err).Message() != "rack_id is required" {
		t.Errorf("GetRackFirmwareInventory {} = %v, want INVALID_ARGUMENT", err)
	}
	emptied := s.ofKind(hw.KindCompute)[0]
	emptied.RackID = "rack-emptied"
	elsewhere := *emptied.BMC // a BMC is registered under one node only
	elsewhere.IP = "127.0.0.250"
	emptied.BMC = &elsewhere
	if err := s.racks.Create([]hw.Node{emptied})[0]; err != nil {
		t.Fatal(err)
	}
	if err := s.racks.Delete("rack-emptied", emptied.ID); err != nil {
		t.Fatal(err)
	}
	empty, err := s.client.GetRackFirmwareInventory(rpcContext(t), &rmspb.GetRackFirmwareInventoryRequest{RackId: "rack-emptied"})
	if err != nil || empty.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(empty.GetNodes()) != 0 {
		t.Fatalf("GetRackFirmwareInventory(emptied rack) = %v, %v", empty, err)
	}
}

// A batch node without ids, with an address that cannot be dialled, listed
// twice, or without the endpoint its inventory is read through fails on
// its own, and nothing is sent for it.
func TestBatchGetFirmwareInventoryRefusesNodesWithoutIO(t *testing.T) {
	s := startSimRack(t)
	compute, sw := s.ofKind(hw.KindCompute), s.ofKind(hw.KindSwitch)[0]
	requests := func(n hw.Node) int {
		got := s.device(t, n.ID).Requests()
		if n.Type.Kind() == hw.KindSwitch {
			got += s.nvos(t, n.ID).NVUERequests()
		}
		return got
	}
	// What one read of compute[0] costs, to tell a duplicate that was read
	// twice from one that was refused.
	base := requests(compute[0])
	if resp, err := s.client.BatchGetFirmwareInventory(rpcContext(t), &rmspb.BatchGetFirmwareInventoryRequest{
		Nodes: nodeSet(compute[0])}); err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("one node = %v, %v", resp, err)
	}
	oneRead := requests(compute[0]) - base

	noID := compute[1]
	noID.ID = ""
	noRack := compute[2]
	noRack.RackID = " "
	badAddress := compute[3]
	bmc := *badAddress.BMC
	bmc.IP = "bmc 4"
	badAddress.BMC = &bmc
	bmcOnly := sw
	bmcOnly.Host = nil
	noBMC := compute[4]
	noBMC.BMC, noBMC.Host = nil, compute[4].BMC // an endpoint, but not the one compute inventory is read through
	nodes := []hw.Node{compute[0], noID, noRack, badAddress, compute[0], bmcOnly, noBMC}
	want := []string{"", "node_id is required", "rack_id is required",
		`bmc_endpoint ip_address "bmc 4" is neither an IP address nor a valid host name`,
		"duplicate target rack_id/node_id: " + compute[0].RackID + "/" + compute[0].ID,
		"host_endpoint is required for switch firmware inventory", "bmc_endpoint is required for firmware inventory"}
	watched := []hw.Node{compute[1], compute[2], compute[3], sw, compute[4]}
	before := make([]int, len(watched))
	for i, n := range watched {
		before[i] = requests(n)
	}
	base = requests(compute[0])
	resp, err := s.client.BatchGetFirmwareInventory(rpcContext(t), &rmspb.BatchGetFirmwareInventoryRequest{Nodes: nodeSet(nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || r.GetStats().GetTotalNodes() != 7 || r.GetStats().GetSuccessfulNodes() != 1 ||
		r.GetStats().GetFailedNodes() != 6 || len(resp.GetNodes()) != 1 || resp.GetNodes()[0].GetNodeId() != compute[0].ID {
		t.Fatalf("response = %v, inventories %v", r, resp.GetNodes())
	}
	for i, res := range r.GetNodeResults() {
		if res.GetNodeId() != nodes[i].ID || res.GetErrorMessage() != want[i] {
			t.Errorf("result %d = %v, want %q", i, res, want[i])
		}
	}
	wantMessage := "Firmware inventory retrieved for 1/7 nodes; failed: node_id=: node_id is required; node_id=" + compute[2].ID +
		": rack_id is required; node_id=" + badAddress.ID + ": " + want[3] + "; node_id=" + compute[0].ID + ": " + want[4] +
		"; node_id=" + sw.ID + ": " + want[5] + "; node_id=" + compute[4].ID + ": " + want[6]
	if r.GetMessage() != wantMessage {
		t.Errorf("message = %q\nwant      %q", r.GetMessage(), wantMessage)
	}
	for i, n := range watched {
		if got := requests(n); got != before[i] {
			t.Errorf("%s was sent %d requests", n.ID, got-before[i])
		}
	}
	if got := requests(compute[0]) - base; got != oneRead {
		t.Errorf("compute[0], listed twice, was sent %d requests; one read is %d", got, oneRead)
	}
}

// An invalid node type or descriptor is INVALID_ARGUMENT, and nothing is
// read.
func TestBatchGetFirmwareInventoryValidatesNodesFirst(t *testing.T) {
	s := startSimRack(t)
	n := s.ofKind(hw.KindCompute)[0]
	badType := rmspb.NodeType(42)
	typed := NodeInfoToProto(n)
	typed.Type = &badType
	described := NodeInfoToProto(n)
	described.Type = nil
	described.NodeDescriptor = &rmspb.NodeDescriptor{Attributes: map[string]string{"role": "toaster", "vendor": "NVIDIA", "product_family": "GB200"}}
	before := s.device(t, n.ID).Requests()
	for _, bad := range []*rmspb.NodeInfo{typed, described} {
		_, err := s.client.BatchGetFirmwareInventory(rpcContext(t), &rmspb.BatchGetFirmwareInventoryRequest{
			Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{NodeInfoToProto(n), bad}}})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "node "+n.ID) {
			t.Errorf("BatchGetFirmwareInventory with %v: %v, want INVALID_ARGUMENT naming the node", bad.GetNodeDescriptor(), err)
		}
	}
	if got := s.device(t, n.ID).Requests(); got != before {
		t.Fatalf("%d requests reached the BMC from refused requests", got-before)
	}
}
