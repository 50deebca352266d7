package rmsserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
)

func TestGetNodeDeviceInfo(t *testing.T) {
	s := startSimRack(t)
	compute := s.ofKind(hw.KindCompute)[3]
	resp, err := s.client.GetNodeDeviceInfo(rpcContext(t), &rmspb.GetNodeDeviceInfoRequest{RackId: compute.RackID, NodeId: compute.ID})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("GetNodeDeviceInfo = %v, %v", resp, err)
	}
	di := resp.GetDeviceInfo()
	if di.GetNodeId() != compute.ID || di.ChassisSn == nil || di.SlotNumber == nil || di.TrayIndex == nil {
		t.Fatalf("device info = %v", di)
	}

	shelf := s.ofKind(hw.KindPowerShelf)[0]
	none, err := s.client.GetNodeDeviceInfo(rpcContext(t), &rmspb.GetNodeDeviceInfoRequest{RackId: shelf.RackID, NodeId: shelf.ID})
	if err != nil || none.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || none.GetDeviceInfo() != nil || none.GetMessage() == "" {
		t.Fatalf("shelf device info = %v, %v (want SUCCESS, a message, no payload)", none, err)
	}
	missing, err := s.client.GetNodeDeviceInfo(rpcContext(t), &rmspb.GetNodeDeviceInfoRequest{RackId: shelf.RackID, NodeId: "ghost"})
	if err != nil || missing.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(missing.GetMessage(), "ghost") {
		t.Fatalf("unknown node = %v, %v", missing, err)
	}
}

func TestListNodeDeviceInfoByNodeTypeCoversEverySwitch(t *testing.T) {
	s := startSimRack(t)
	rack := s.nodes[0].RackID
	byType, err := s.client.ListNodeDeviceInfoByNodeType(rpcContext(t), &rmspb.ListNodeDeviceInfoByNodeTypeRequest{
		RackId: rack, NodeType: rmspb.NodeType_SWITCH_GB200_NVIDIA})
	if err != nil || byType.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(byType.GetNodeDeviceDetails()) != 9 ||
		byType.GetStats().GetSuccessfulNodes() != 9 {
		t.Fatalf("by type = %v, %v", byType, err)
	}
	byDescriptor, err := s.client.ListNodeDeviceInfoByNodeType(rpcContext(t), &rmspb.ListNodeDeviceInfoByNodeTypeRequest{
		RackId: rack, NodeDescriptor: &rmspb.NodeDescriptor{Attributes: map[string]string{"role": "compute", "vendor": "NVIDIA", "product_family": "gb200"}}})
	if err != nil || len(byDescriptor.GetNodeDeviceDetails()) != 18 {
		t.Fatalf("by descriptor = %d details, %v", len(byDescriptor.GetNodeDeviceDetails()), err)
	}
	slots := map[uint32]bool{}
	for _, d := range byDescriptor.GetNodeDeviceDetails() {
		slots[d.GetSlotNumber()*100+d.GetTrayIndex()] = true
	}
	if len(slots) != 18 {
		t.Errorf("18 compute trays must have 18 distinct slot/tray positions, got %d", len(slots))
	}
	_, err = s.client.ListNodeDeviceInfoByNodeType(rpcContext(t), &rmspb.ListNodeDeviceInfoByNodeTypeRequest{RackId: rack, NodeType: rmspb.NodeType(55)})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("invalid node type: %v", err)
	}
	unknownRack, err := s.client.ListNodeDeviceInfoByNodeType(rpcContext(t), &rmspb.ListNodeDeviceInfoByNodeTypeRequest{
		RackId: "nope", NodeType: rmspb.NodeType_SWITCH_GB200_NVIDIA})
	if err != nil || unknownRack.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("unknown rack: %v, %v", unknownRack, err)
	}
}

// Upstream adds no entry for a power shelf, counts it successful and never
// contacts it (so it needs no credentials): a whole rack, shelves with and
// without credentials or a BMC endpoint among them, is SUCCESS.
func TestDeviceInfoOfAWholeRackIsSuccess(t *testing.T) {
	s := startSimRack(t)
	nodes := append([]hw.Node(nil), s.nodes...)
	shelves := 0
	for i, n := range nodes {
		if n.Type.Kind() != hw.KindPowerShelf {
			continue
		}
		switch shelves++; shelves % 3 {
		case 1: // no credentials
			bmc := *n.BMC
			bmc.Credentials = hw.Credentials{}
			nodes[i].BMC = &bmc
		case 2: // no BMC endpoint at all
			nodes[i].BMC = nil
		}
	}
	resp, err := s.client.BatchGetNodeDeviceInfo(rpcContext(t), &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: nodeSet(nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	st := resp.GetStats()
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || st.GetTotalNodes() != 35 || st.GetSuccessfulNodes() != 35 ||
		st.GetFailedNodes() != 0 || len(resp.GetNodeDeviceDetails()) != 27 {
		t.Fatalf("BatchGetNodeDeviceInfo(rack) = %v, %s, %d details", resp.GetStatus(), resp.GetMessage(), len(resp.GetNodeDeviceDetails()))
	}
	for _, d := range resp.GetNodeDeviceDetails() {
		if strings.Contains(d.GetNodeId(), "powershelf") {
			t.Errorf("entry for power shelf %s", d.GetNodeId())
		}
	}

	byType, err := s.client.ListNodeDeviceInfoByNodeType(rpcContext(t), &rmspb.ListNodeDeviceInfoByNodeTypeRequest{
		RackId: nodes[0].RackID, NodeType: rmspb.NodeType_POWERSHELF_GB200_LITEON})
	if err != nil || byType.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || byType.GetStats().GetSuccessfulNodes() != 8 ||
		len(byType.GetNodeDeviceDetails()) != 0 {
		t.Fatalf("ListNodeDeviceInfoByNodeType(shelves) = %v, %v", byType, err)
	}

	// A shelf listed twice is still refused as a duplicate.
	shelf := s.ofKind(hw.KindPowerShelf)[0]
	dup, err := s.client.BatchGetNodeDeviceInfo(rpcContext(t), &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: nodeSet(shelf, shelf)})
	if err != nil || dup.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || dup.GetStats().GetFailedNodes() != 1 ||
		!strings.Contains(dup.GetMessage(), "duplicate target") {
		t.Fatalf("duplicate shelf = %v, %v", dup, err)
	}
}

// Placement is optional upstream: a slot, tray or chassis value the device
// leaves out, or sends null, empty, non-numeric, negative or beyond what
// callers accept (slot and tray: int32, as NICo reads them), stays unset in
// the reply and the node succeeds.
func TestDeviceInfoLeavesUnusablePlacementUnset(t *testing.T) {
	s := startSimRack(t)
	compute, sw := s.ofKind(hw.KindCompute)[0], s.ofKind(hw.KindSwitch)[0]
	nvos := s.nvos(t, sw.ID)
	tests := []struct {
		give       string // raw JSON the device sends; "" leaves the key out
		wantNumber string // slot and tray in the reply; "unset" when absent
		wantSerial string // chassis_sn in the reply
	}{
		{give: "", wantNumber: "unset", wantSerial: "unset"},
		{give: "null", wantNumber: "unset", wantSerial: "unset"},
		{give: `""`, wantNumber: "unset", wantSerial: "unset"},
		{give: `"unknown"`, wantNumber: "unset", wantSerial: "unset"},
		{give: "-1", wantNumber: "unset", wantSerial: "unset"},
		{give: `"-7"`, wantNumber: "unset", wantSerial: "unset"},
		{give: "2147483648", wantNumber: "unset", wantSerial: "2147483648"},
		{give: "4294967297", wantNumber: "unset", wantSerial: "4294967297"},
		{give: `"9223372036854775808"`, wantNumber: "unset", wantSerial: "unset"},
		{give: "0", wantNumber: "0", wantSerial: "0"},
		{give: "2147483647", wantNumber: "2147483647", wantSerial: "2147483647"},
		{give: `"12"`, wantNumber: "12", wantSerial: "12"},
	}
	for _, tt := range tests {
		for _, key := range []string{"ChassisSerialNumber", "TraySlotNumber", "TraySlotIndex"} {
			s.device(t, compute.ID).SetTopology(key, json.RawMessage(tt.give))
		}
		for _, key := range []string{"chassis-sn", "slot-number", "tray-index", "topology-id"} {
			nvos.SetChassisLocation(key, json.RawMessage(tt.give))
		}
		resp, err := s.client.BatchGetNodeDeviceInfo(rpcContext(t), &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: nodeSet(compute, sw)})
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetNodeDeviceDetails()) != 2 {
			t.Fatalf("device sends %s: %v, %v", tt.give, resp, err)
		}
		for _, d := range resp.GetNodeDeviceDetails() {
			if got := optional(d.SlotNumber); got != tt.wantNumber {
				t.Errorf("%s sends %s: slot_number %s, want %s", d.GetNodeId(), tt.give, got, tt.wantNumber)
			}
			if got := optional(d.TrayIndex); got != tt.wantNumber {
				t.Errorf("%s sends %s: tray_index %s, want %s", d.GetNodeId(), tt.give, got, tt.wantNumber)
			}
			if got := optional(d.ChassisSn); got != tt.wantSerial {
				t.Errorf("%s sends %s: chassis_sn %s, want %s", d.GetNodeId(), tt.give, got, tt.wantSerial)
			}
		}
	}
}

// optional prints a presence-tracked proto number, "unset" when absent.
func optional[T uint32 | int64](v *T) string {
	if v == nil {
		return "unset"
	}
	return fmt.Sprint(*v)
}

// Callers send switches with host port 0 (NICo) or 22 (inventories with
// one port column for SSH and NVUE); both mean the configured NVUE port,
// here the simulator's, as under `rmsd --simulate`.
func TestSwitchHostPortZeroOr22ReachesNVUE(t *testing.T) {
	s := startSimRack(t)
	var nodes []hw.Node
	for i, n := range s.ofKind(hw.KindSwitch) {
		host := *n.Host
		host.Port = []int{0, 22}[i%2]
		n.Host, n.BMC = &host, nil // NVUE only
		nodes = append(nodes, n)
	}
	resp, err := s.client.BatchGetNodeDeviceInfo(rpcContext(t), &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: nodeSet(nodes...)})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetNodeDeviceDetails()) != 9 {
		t.Fatalf("switches on host port 0/22: %v, %v", resp, err)
	}
	trays := map[uint32]bool{}
	for _, d := range resp.GetNodeDeviceDetails() {
		if d.TrayIndex == nil {
			t.Fatalf("%s: no tray_index", d.GetNodeId())
		}
		trays[d.GetTrayIndex()] = true
	}
	if len(trays) != 9 {
		t.Fatalf("9 switches need 9 distinct tray indexes, got %v", trays)
	}
}

// nvos returns the simulated NVOS host of a switch node.
func (s *simRack) nvos(t *testing.T, id string) *sim.NVOSHost {
	t.Helper()
	for _, n := range s.fleet.Nodes() {
		if h, ok := n.Switch.(*sim.NVOSHost); ok && n.ID == id {
			return h
		}
	}
	t.Fatalf("no simulated NVOS host for %s", id)
	return nil
}

// The device-info replies read as upstream's: "Device info retrieved
// successfully", or "Completed with errors: node_id=<id>: <error>; ..."
// in request order, counting only the failed nodes.
func TestDeviceInfoMessages(t *testing.T) {
	s := startSimRack(t)
	compute, sw := s.ofKind(hw.KindCompute), s.ofKind(hw.KindSwitch)[0]
	ok, err := s.client.BatchGetNodeDeviceInfo(rpcContext(t), &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: nodeSet(compute[0], sw)})
	if err != nil || ok.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || ok.GetMessage() != "Device info retrieved successfully" {
		t.Fatalf("healthy batch = %v, %v", ok, err)
	}
	if err := s.device(t, compute[2].ID).SetUnreachable(true); err != nil {
		t.Fatal(err)
	}
	noID := compute[3]
	noID.ID = ""
	badAddress := compute[4]
	bmc := *badAddress.BMC
	bmc.IP = "bmc 5"
	badAddress.BMC = &bmc
	nodes := []hw.Node{compute[0], compute[2], noID, badAddress}
	resp, err := s.client.BatchGetNodeDeviceInfo(rpcContext(t), &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: nodeSet(nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	st := resp.GetStats()
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || st.GetTotalNodes() != 4 || st.GetSuccessfulNodes() != 1 ||
		st.GetFailedNodes() != 3 || len(resp.GetNodeDeviceDetails()) != 1 || resp.GetNodeDeviceDetails()[0].GetNodeId() != compute[0].ID {
		t.Fatalf("BatchGetNodeDeviceInfo = %v", resp)
	}
	parts := strings.Split(strings.TrimPrefix(resp.GetMessage(), "Completed with errors: "), "; ")
	if !strings.HasPrefix(resp.GetMessage(), "Completed with errors: node_id=") || len(parts) != 3 ||
		!strings.HasPrefix(parts[0], "node_id="+compute[2].ID+": ") || !strings.Contains(parts[0], "unreachable") ||
		parts[1] != "node_id=: node_id is required" ||
		parts[2] != `node_id=`+badAddress.ID+`: bmc_endpoint ip_address "bmc 5" is neither an IP address nor a valid host name` {
		t.Fatalf("message = %q", resp.GetMessage())
	}
}

func TestGetNodeDeviceInfoNeedsRackAndNodeIDs(t *testing.T) {
	s := startSimRack(t)
	n := s.ofKind(hw.KindCompute)[0]
	for _, req := range []*rmspb.GetNodeDeviceInfoRequest{{}, {RackId: n.RackID}, {NodeId: n.ID}, {RackId: " ", NodeId: n.ID}} {
		resp, err := s.client.GetNodeDeviceInfo(rpcContext(t), req)
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetMessage() != "rack_id and node_id are required" ||
			resp.GetDeviceInfo() != nil {
			t.Errorf("GetNodeDeviceInfo(%v) = %v, %v", req, resp, err)
		}
	}
	tests := []struct {
		rack, node, want string
	}{
		{"no-such-rack", n.ID, "rack not found: no-such-rack"},
		{n.RackID, "ghost", "node ghost not found in rack " + n.RackID},
	}
	for _, tt := range tests {
		resp, err := s.client.GetNodeDeviceInfo(rpcContext(t), &rmspb.GetNodeDeviceInfoRequest{RackId: tt.rack, NodeId: tt.node})
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetMessage() != tt.want {
			t.Errorf("GetNodeDeviceInfo(%s, %s) = %v, %v, want %q", tt.rack, tt.node, resp, err, tt.want)
		}
	}
	ok, err := s.client.GetNodeDeviceInfo(rpcContext(t), &rmspb.GetNodeDeviceInfoRequest{RackId: n.RackID, NodeId: n.ID})
	if err != nil || ok.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || ok.GetMessage() != "Device info retrieved successfully" {
		t.Fatalf("GetNodeDeviceInfo = %v, %v", ok, err)
	}
}

// Upstream answers a rack without nodes of the type as a success with no
// details and zero stats (not "No nodes specified in request"); an empty
// rack_id is refused in-band.
func TestListNodeDeviceInfoByNodeTypeWithNoNodeOfTheType(t *testing.T) {
	client, _ := inventoryClient(t)
	ctx := rpcContext(t)
	if _, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		typedNode("rack-d", "compute-1", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
	}}}); err != nil {
		t.Fatal(err)
	}
	resp, err := client.ListNodeDeviceInfoByNodeType(ctx, &rmspb.ListNodeDeviceInfoByNodeTypeRequest{
		RackId: "rack-d", NodeType: rmspb.NodeType_SWITCH_GB200_NVIDIA})
	st := resp.GetStats()
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || resp.GetMessage() != "Device info retrieved successfully" ||
		st == nil || st.GetTotalNodes() != 0 || st.GetSuccessfulNodes() != 0 || st.GetFailedNodes() != 0 || len(resp.GetNodeDeviceDetails()) != 0 {
		t.Fatalf("no switch in the rack = %v, %v", resp, err)
	}
	for rack, want := range map[string]string{"": "rack_id is required", "rack-z": "rack not found: rack-z"} {
		resp, err := client.ListNodeDeviceInfoByNodeType(ctx, &rmspb.ListNodeDeviceInfoByNodeTypeRequest{
			RackId: rack, NodeType: rmspb.NodeType_SWITCH_GB200_NVIDIA})
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetMessage() != want || resp.GetStats() == nil {
			t.Errorf("rack %q = %v, %v, want %q", rack, resp, err, want)
		}
	}
}
