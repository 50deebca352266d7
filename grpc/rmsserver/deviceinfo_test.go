package rmsserver

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
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

func TestBatchGetNodeDeviceInfoRefusesShelvesPerNode(t *testing.T) {
	s := startSimRack(t)
	compute, sw, shelf := s.ofKind(hw.KindCompute)[0], s.ofKind(hw.KindSwitch)[0], s.ofKind(hw.KindPowerShelf)[0]
	resp, err := s.client.BatchGetNodeDeviceInfo(rpcContext(t), &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: nodeSet(compute, sw, shelf)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetStats().GetSuccessfulNodes() != 2 ||
		len(resp.GetNodeDeviceDetails()) != 2 || !strings.Contains(resp.GetMessage(), shelf.ID) {
		t.Fatalf("BatchGetNodeDeviceInfo = %v", resp)
	}
}
