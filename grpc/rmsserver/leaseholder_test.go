package rmsserver

import (
	"strings"
	"testing"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// A registered power change and a power batch send their BMC requests
// under their operation lease's id: the simulator records one lease holder
// per operation on the node, none unattributed, and no overlap.
func TestPowerChangesNameTheirLeaseAsHolder(t *testing.T) {
	s := startSimRack(t)
	ctx := rpcContext(t)
	node := s.ofKind(hw.KindCompute)[0]
	set, err := s.client.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: node.RackID, NodeId: node.ID,
		Operation: rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF})
	if err != nil || set.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("SetPowerState = %v, %v", set, err)
	}
	batch, err := s.client.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(node),
		Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
	if err != nil || batch.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("BatchSetPowerState = %v, %v", batch, err)
	}
	holders := s.fleet.OverlapRecorder().Holders(node.ID)
	if len(holders) != 2 {
		t.Fatalf("holders recorded on %s = %v, want one lease per power change", node.ID, holders)
	}
	for _, h := range holders {
		if !strings.HasPrefix(h, "lease-") {
			t.Errorf("holder %q on %s is not an operation lease", h, node.ID)
		}
	}
	if n := s.fleet.UnattributedRequests(); n != 0 {
		t.Errorf("%d mutating requests named no holder", n)
	}
	if n := s.fleet.Overlaps(); n != 0 {
		t.Errorf("%d overlaps", n)
	}
}
