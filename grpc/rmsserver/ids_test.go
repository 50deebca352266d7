package rmsserver

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// idCall sends one RPC with a caller-chosen id in one of its id fields.
type idCall struct {
	rpc, field string
	call       func(ctx context.Context, c rmspb.RackManagerClient, id string) error
}

// idCalls covers every RPC that takes a job, rack or node id, in every id
// field: directly, or on the second node of a batch. The power RPCs ask for
// op.
func idCalls(s *simRack, op rmspb.PowerOperation) []idCall {
	n := s.ofKind(hw.KindCompute)[0]
	ep := func() *rmspb.Endpoint { return NodeInfoToProto(n).GetBmcEndpoint() }
	batchOf := func(nodes []hw.Node, field, id string) *rmspb.NodeSet {
		set := nodeSet(nodes...)
		switch field {
		case "node_id":
			set.Nodes[1].NodeId = id
		case "rack_id":
			set.Nodes[1].RackId = id
		}
		return set
	}
	batch := func(field, id string) *rmspb.NodeSet { return batchOf(s.nodes, field, id) }
	var calls []idCall
	for _, field := range []string{"rack_id", "node_id"} {
		pick := func(id string) (rack, node string) {
			if field == "rack_id" {
				return id, n.ID
			}
			return n.RackID, id
		}
		calls = append(calls,
			idCall{"SetPowerState", field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				rack, node := pick(id)
				_, err := c.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: rack, NodeId: node, Operation: op})
				return err
			}},
			idCall{"GetPowerState", field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				rack, node := pick(id)
				_, err := c.GetPowerState(ctx, &rmspb.GetPowerStateRequest{RackId: rack, NodeId: node})
				return err
			}},
			idCall{"UpdateNode", field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				rack, node := pick(id)
				_, err := c.UpdateNode(ctx, &rmspb.UpdateNodeRequest{RackId: rack, NodeId: node, UpdateInfo: &rmspb.NodeUpdateInfo{BmcEndpoint: ep()}})
				return err
			}},
			idCall{"DeleteNode", field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				rack, node := pick(id)
				_, err := c.DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: rack, NodeId: node})
				return err
			}},
			idCall{"GetNodeDeviceInfo", field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				rack, node := pick(id)
				_, err := c.GetNodeDeviceInfo(ctx, &rmspb.GetNodeDeviceInfoRequest{RackId: rack, NodeId: node})
				return err
			}},
			idCall{"GetNodeFirmwareInventory", field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				rack, node := pick(id)
				_, err := c.GetNodeFirmwareInventory(ctx, &rmspb.GetNodeFirmwareInventoryRequest{RackId: rack, NodeId: node})
				return err
			}},
			idCall{"BatchGetFirmwareInventory", "nodes[1]." + field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				_, err := c.BatchGetFirmwareInventory(ctx, &rmspb.BatchGetFirmwareInventoryRequest{Nodes: batch(field, id)})
				return err
			}},
			idCall{"BatchSetPowerState", "nodes[1]." + field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				_, err := c.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: batch(field, id), Operation: op})
				return err
			}},
			idCall{"BatchGetPowerState", "nodes[1]." + field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				_, err := c.BatchGetPowerState(ctx, &rmspb.BatchGetPowerStateRequest{Nodes: batch(field, id)})
				return err
			}},
			idCall{"BatchGetNodeDeviceInfo", "nodes[1]." + field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				_, err := c.BatchGetNodeDeviceInfo(ctx, &rmspb.BatchGetNodeDeviceInfoRequest{Nodes: batch(field, id)})
				return err
			}},
			idCall{"CreateNodes", "nodes[1]." + field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				_, err := c.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: batch(field, id)})
				return err
			}},
			idCall{"ExecuteColdReboot", "nodes[1]." + field, func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
				// Compute trays only: a valid request is refused in-band
				// (not a whole rack), so no cold reboot ever starts here.
				_, err := c.ExecuteColdReboot(ctx, quickColdReboot(batchOf(s.ofKind(hw.KindCompute), field, id)))
				return err
			}},
		)
	}
	return append(calls,
		idCall{"ListNodeDeviceInfoByNodeType", "rack_id", func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
			_, err := c.ListNodeDeviceInfoByNodeType(ctx, &rmspb.ListNodeDeviceInfoByNodeTypeRequest{RackId: id, NodeType: rmspb.NodeType_COMPUTE_GB200_NVIDIA})
			return err
		}},
		idCall{"GetRackFirmwareInventory", "rack_id", func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
			_, err := c.GetRackFirmwareInventory(ctx, &rmspb.GetRackFirmwareInventoryRequest{RackId: id})
			return err
		}},
		idCall{"GetJobStatus", "job_id", func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
			_, err := c.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: id})
			return err
		}},
		idCall{"GetFirmwareJobStatus", "job_id", func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
			_, err := c.GetFirmwareJobStatus(ctx, &rmspb.GetFirmwareJobStatusRequest{JobId: id})
			return err
		}},
		idCall{"GetSwitchSystemImageJobStatus", "job_id", func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
			_, err := c.GetSwitchSystemImageJobStatus(ctx, &rmspb.GetSwitchSystemImageJobStatusRequest{JobId: id})
			return err
		}},
		idCall{"GetConfigureSwitchCertificateJobStatus", "job_id", func(ctx context.Context, c rmspb.RackManagerClient, id string) error {
			_, err := c.GetConfigureSwitchCertificateJobStatus(ctx, &rmspb.GetConfigureSwitchCertificateJobStatusRequest{JobId: id})
			return err
		}},
	)
}

// A 100,000-character id is refused with INVALID_ARGUMENT by every RPC
// that takes ids, naming the field and the limit without echoing the id,
// and nothing runs: no BMC is reset, the registry and the job engine are
// unchanged.
func TestOversizedIDsAreInvalidArgument(t *testing.T) {
	s := startSimRack(t)
	long := strings.Repeat("r", 100_000)
	// A power-off, so that a request acted on would show as a reset.
	idle, err := s.engine.Actors(rpcContext(t))
	if err != nil {
		t.Fatal(err)
	}
	before := len(idle.Actors)
	for _, c := range idCalls(s, rmspb.PowerOperation_POWER_OPERATION_FORCE_OFF) {
		err := c.call(rpcContext(t), s.client, long)
		st, _ := status.FromError(err)
		want := c.field + " is 100000 characters long; ids are limited to 256 characters"
		if st.Code() != codes.InvalidArgument || st.Message() != want {
			t.Errorf("%s with a long %s: %v %q, want INVALID_ARGUMENT %q", c.rpc, c.field, st.Code(), clip(st.Message(), 100), want)
		}
	}
	for _, n := range s.nodes {
		if resets := s.device(t, n.ID).Resets(); len(resets) != 0 {
			t.Fatalf("%s was reset by a refused request: %v", n.ID, resets)
		}
	}
	if got := len(s.racks.Nodes()); got != len(s.nodes) || len(s.racks.Racks()) != 1 {
		t.Fatalf("the registry changed: %d nodes, racks %v", got, s.racks.Racks())
	}
	if l, err := s.engine.Actors(rpcContext(t)); err != nil || len(l.Actors) != before || l.HeldNodes != 0 {
		t.Fatalf("the job engine changed: %+v, %v", l, err)
	}
}

// The limit counts characters: 256 of them pass, however many bytes they
// take, and the request is answered as usual.
func TestIDsOfTheLimitPass(t *testing.T) {
	s := startSimRack(t)
	for _, id := range []string{strings.Repeat("r", 256), strings.Repeat("é", 256)} {
		// A power-on: a power-off would take the shelves' output, the
		// trays' BMCs with it, and every later read would wait out its
		// deadline.
		for _, c := range idCalls(s, rmspb.PowerOperation_POWER_OPERATION_ON) {
			if err := c.call(rpcContext(t), s.client, id); status.Code(err) == codes.InvalidArgument {
				t.Errorf("%s with a %d-byte %s: %v", c.rpc, len(id), c.field, err)
			}
		}
	}
}

func TestIDLimitMessageNamesNodeByPosition(t *testing.T) {
	set := &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{{NodeId: "a", RackId: "r"}, {NodeId: "b", RackId: strings.Repeat("€", 257)}}}
	err := checkNodeSetIDs(set)
	if status.Code(err) != codes.InvalidArgument ||
		status.Convert(err).Message() != fmt.Sprintf("nodes[1].rack_id is 257 characters long; ids are limited to %d characters", maxIDLength) {
		t.Fatalf("%v", err)
	}
}
