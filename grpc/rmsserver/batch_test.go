package rmsserver

import (
	"testing"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// Every batch RPC answers an empty node list (no NodeSet, or one without
// nodes) in-band, as upstream: FAILURE, "No nodes specified in request",
// zero stats, no node results. It is checked before anything else, so an
// invalid operation or a missing dependency does not change the answer.
func TestEveryBatchRPCWithNoNodes(t *testing.T) {
	s := startSimRack(t)
	ctx := rpcContext(t)
	type reply struct {
		status  rmspb.ReturnCode
		message string
		stats   *rmspb.NodeOperationStats
		results int
	}
	fromBatch := func(r *rmspb.NodeBatchResponse) reply {
		return reply{r.GetStatus(), r.GetMessage(), r.GetStats(), len(r.GetNodeResults())}
	}
	for _, set := range []*rmspb.NodeSet{nil, {}} {
		calls := map[string]func() (reply, error){
			"BatchSetPowerState (invalid operation)": func() (reply, error) {
				r, err := s.client.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: set, Operation: rmspb.PowerOperation(99)})
				return fromBatch(r.GetResponse()), err
			},
			"BatchSetPowerState": func() (reply, error) {
				r, err := s.client.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: set, Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
				return fromBatch(r.GetResponse()), err
			},
			"BatchGetPowerState": func() (reply, error) {
				r, err := s.client.BatchGetPowerState(ctx, &rmspb.BatchGetPowerStateRequest{Nodes: set})
				return fromBatch(r.GetResponse()), err
			},
			"BatchGetNodeDeviceInfo": func() (reply, error) {
				r, err := s.client.BatchGetNodeDeviceInfo(ctx, &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: set})
				if len(r.GetNodeDeviceDetails()) != 0 {
					t.Errorf("device details for no nodes: %v", r.GetNodeDeviceDetails())
				}
				return reply{r.GetStatus(), r.GetMessage(), r.GetStats(), 0}, err
			},
			"BatchGetFirmwareInventory": func() (reply, error) {
				r, err := s.client.BatchGetFirmwareInventory(ctx, &rmspb.BatchGetFirmwareInventoryRequest{Nodes: set})
				if len(r.GetNodes()) != 0 {
					t.Errorf("inventories for no nodes: %v", r.GetNodes())
				}
				return fromBatch(r.GetResponse()), err
			},
			"CompareFirmwareObject (invalid manifest)": func() (reply, error) {
				r, err := s.client.CompareFirmwareObject(ctx, &rmspb.CompareFirmwareObjectRequest{Nodes: set, ConfigJson: "not a manifest"})
				if len(r.GetNodes()) != 0 || r.GetMatchesManifest() || r.GetObjectId() != "" {
					t.Errorf("a comparison of no nodes: %v", r)
				}
				return fromBatch(r.GetResponse()), err
			},
			"BatchUpdateFirmware": func() (reply, error) {
				r, err := s.client.BatchUpdateFirmware(ctx, &rmspb.BatchUpdateFirmwareRequest{Nodes: set, Activate: true,
					FirmwareTargets: map[int32]*rmspb.FirmwareTargetList{
						int32(rmspb.NodeType_COMPUTE_GB200_NVIDIA): {Targets: []*rmspb.FirmwareTarget{{Target: "bmc", Filename: "bmc.fwpkg"}}}}})
				if len(r.GetJobs()) != 0 || r.GetResponse().GetJobId() != "" {
					t.Errorf("BatchUpdateFirmware started jobs for no nodes: %v", r)
				}
				return fromBatch(r.GetResponse()), err
			},
			// No catalog: the empty node set is answered first.
			"ApplyStoredFirmwareObject (no catalog)": func() (reply, error) {
				r, err := s.client.ApplyStoredFirmwareObject(ctx, &rmspb.ApplyStoredFirmwareObjectRequest{Nodes: set, ObjectId: "DGXGB200_1.3.7"})
				if len(r.GetJobs()) != 0 || r.GetResponse().GetJobId() != "" {
					t.Errorf("ApplyStoredFirmwareObject started jobs for no nodes: %v", r)
				}
				return fromBatch(r.GetResponse()), err
			},
			"ApplyFirmwareObject (invalid manifest, no catalog)": func() (reply, error) {
				r, err := s.client.ApplyFirmwareObject(ctx, &rmspb.ApplyFirmwareObjectRequest{Nodes: set, ConfigJson: "not a manifest"})
				if len(r.GetJobs()) != 0 || r.GetResponse().GetJobId() != "" || r.GetObjectId() != "" {
					t.Errorf("ApplyFirmwareObject answered jobs or an object for no nodes: %v", r)
				}
				return fromBatch(r.GetResponse()), err
			},
			"CreateNodes": func() (reply, error) {
				r, err := s.client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: set})
				return reply{r.GetResponse().GetStatus(), r.GetResponse().GetMessage(), r.GetStats(), 0}, err
			},
			"ExecuteColdReboot": func() (reply, error) {
				r, err := s.client.ExecuteColdReboot(ctx, &rmspb.ExecuteColdRebootRequest{Nodes: set})
				if r.GetResponse().GetJobId() != "" {
					t.Errorf("a job id for no nodes: %s", r.GetResponse().GetJobId())
				}
				return fromBatch(r.GetResponse()), err
			},
		}
		for rpc, call := range calls {
			got, err := call()
			if err != nil {
				t.Errorf("%s(nodes=%v): %v, want an in-band answer", rpc, set, err)
				continue
			}
			if got.status != rmspb.ReturnCode_RETURN_CODE_FAILURE || got.message != "No nodes specified in request" || got.stats == nil ||
				got.stats.GetTotalNodes() != 0 || got.stats.GetSuccessfulNodes() != 0 || got.stats.GetFailedNodes() != 0 || got.results != 0 {
				t.Errorf("%s(nodes=%v) = %+v", rpc, set, got)
			}
		}
	}
	if len(s.racks.Nodes()) != len(s.nodes) {
		t.Fatal("an empty CreateNodes changed the registry")
	}
	for _, n := range s.ofKind(hw.KindCompute) {
		if len(s.device(t, n.ID).Resets()) != 0 {
			t.Fatalf("%s was reset by an empty batch", n.ID)
		}
	}
}
