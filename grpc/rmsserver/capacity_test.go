package rmsserver

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/spdm"
)

// Every RPC that takes a node list refuses more than max_batch_nodes
// with INVALID_ARGUMENT naming the limit, before anything starts.
func TestNodeListsOverMaxBatchNodesAreRefused(t *testing.T) {
	conn := startTestServer(t, Deps{MaxBatchNodes: 2})
	v1, v2 := rmspb.NewRackManagerClient(conn), rmspbv2.NewRackManagerV2Client(conn)
	set := &rmspb.NodeSet{}
	for i := range 3 {
		set.Nodes = append(set.Nodes, &rmspb.NodeInfo{RackId: "r", NodeId: fmt.Sprint("n", i), Type: rmspb.NodeType_SWITCH_GB200_NVIDIA.Enum()})
	}
	ctx := rpcContext(t)
	calls := map[string]func() error{
		"UpdateSwitchSystemPassword": func() error {
			_, err := v1.UpdateSwitchSystemPassword(ctx, &rmspb.UpdateSwitchSystemPasswordRequest{Nodes: set, Username: "admin", Password: "x"})
			return err
		},
		"BatchSetPowerState": func() error {
			_, err := v1.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: set, Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
			return err
		},
		"BatchGetPowerState": func() error {
			_, err := v1.BatchGetPowerState(ctx, &rmspb.BatchGetPowerStateRequest{Nodes: set})
			return err
		},
		"BatchGetFirmwareInventory": func() error {
			_, err := v1.BatchGetFirmwareInventory(ctx, &rmspb.BatchGetFirmwareInventoryRequest{Nodes: set})
			return err
		},
		"CreateNodes": func() error {
			_, err := v1.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: set})
			return err
		},
		"BatchCollectSwitchSpdmAttestationEvidence": func() error {
			_, err := v1.BatchCollectSwitchSpdmAttestationEvidence(ctx, &rmspb.BatchCollectSwitchSpdmAttestationEvidenceRequest{Targets: set.Nodes,
				Nonce: make([]byte, spdm.NonceSize)}) // upstream checks the nonce first
			return err
		},
		"StartSystemValidation": func() error {
			_, err := v2.StartSystemValidation(ctx, &rmspbv2.StartSystemValidationRequest{Nodes: set})
			return err
		},
	}
	for name, call := range calls {
		err := call()
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "limit of 2 per request ([workflows] max_batch_nodes)") {
			t.Errorf("%s with 3 nodes over a limit of 2: %v; want INVALID_ARGUMENT naming the limit", name, err)
		}
	}
	set.Nodes = set.Nodes[:2]
	if _, err := v1.BatchGetPowerState(ctx, &rmspb.BatchGetPowerStateRequest{Nodes: set}); status.Code(err) == codes.InvalidArgument {
		t.Errorf("2 nodes at a limit of 2 refused: %v", err)
	}
}

// unreachableSwitch is a copy of sw whose NVOS and BMC address has
// nothing listening: its password job fails at once. Each i has an
// address of its own (one address is one device, whose jobs exclude each
// other), so a batch of them is admitted whole.
func unreachableSwitch(sw hw.Node, i int) hw.Node {
	ip := fmt.Sprintf("127.0.1.%d", i%250+1)
	host, bmc := *sw.Host, *sw.BMC
	host.IP, bmc.IP = ip, ip
	sw.ID, sw.Host, sw.BMC = fmt.Sprintf("unreachable-%02d", i), &host, &bmc
	return sw
}

// The reproduction, with a limit of 8 records: caller A floods
// password rotations of unreachable switches, whose jobs fail at once, to
// several times the limit; every batch is admitted (the oldest finished
// ones make room), and caller B, on its own connection, is admitted after.
func TestFinishedJobsOfOneCallerNeverFillTheTracker(t *testing.T) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	engine, err := actors.New(sys, actors.Options{MaxTrackedJobs: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		engine.Close()
		sys.Shutdown()
	})
	a := startAdminRackWith(t, fastAdminTiming, func(d *Deps) { d.Jobs = engine })
	switches := a.ofKind(hw.KindSwitch)
	callerB := rmspb.NewRackManagerClient(dial(t, a.conn.Target(), nil))

	const rounds, perBatch = 8, 3 // 32 records through a tracker of 8
	for r := range rounds {
		var batch []hw.Node
		for i := range perBatch {
			batch = append(batch, unreachableSwitch(switches[0], r*perBatch+i))
		}
		resp, err := a.client.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
			Nodes: nodeSet(batch...), Username: "admin", Password: secretPassword})
		if err != nil || resp.GetResponse().GetJobId() == "" || resp.GetResponse().GetStats().GetFailedNodes() != 0 {
			t.Fatalf("caller A, round %d: %v, %v; want every node admitted", r, resp.GetResponse(), err)
		}
		states := a.waitJobs(t, resp.GetResponse().GetJobId())
		if states[0].GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
			t.Fatalf("caller A, round %d: %v; want the unreachable switches failed", r, states)
		}
	}

	resp, err := callerB.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(switches[1]), Username: "admin", Password: secretPassword})
	if err != nil || resp.GetResponse().GetJobId() == "" {
		t.Fatalf("caller B after A's flood: %v, %v; want admitted", resp.GetResponse(), err)
	}
	states := a.waitJobs(t, resp.GetResponse().GetJobId())
	if states[0].GetExecutionState() != completed {
		t.Fatalf("caller B's rotation: %v", states)
	}
}
