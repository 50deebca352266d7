package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// TestSimulateRegistersTheSimulatedRack runs `rmsd --simulate` with no TLS
// switches at all: it must serve on loopback, list the simulated rack and
// its 35 nodes, and write them to the nodes file.
func TestSimulateRegistersTheSimulatedRack(t *testing.T) {
	dir := t.TempDir()
	nodesFile := filepath.Join(dir, "nodes.json")
	cfg := writeFile(t, `
port = 0
[simulator]
network = 93
bmc_port = 0
nvue_port = 0
ssh_port = 0
nodes_file = "`+nodesFile+`"
`)
	d := startRun(t, nil, "--config", cfg, "--simulate")
	addr, stdout, stderr := d.addr, d.stdout, d.stderr
	if host, _, _ := net.SplitHostPort(addr.String()); host != "127.0.0.1" {
		t.Fatalf("simulation must bind loopback, bound %s", addr)
	}
	if !strings.Contains(stdout.String(), "SIMULATION") {
		t.Error("no simulation warning logged")
	}

	client := rmspb.NewRackManagerClient(d.conn)
	rpcCtx, rpcCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rpcCancel()
	racksResp, err := client.ListRacks(rpcCtx, &rmspb.ListRacksRequest{})
	if err != nil || len(racksResp.GetRackIds()) != 1 {
		t.Fatalf("ListRacks = %v, %v", racksResp, err)
	}
	inv, err := client.ListNodeInventory(rpcCtx, &rmspb.ListNodeInventoryRequest{})
	if err != nil || len(inv.GetNodes()) != 35 {
		t.Fatalf("ListNodeInventory has %d nodes, %v; want 35", len(inv.GetNodes()), err)
	}

	// The registered nodes are real simulated devices behind the power RPCs.
	for _, n := range inv.GetNodes()[:3] {
		ps, err := client.GetPowerState(rpcCtx, &rmspb.GetPowerStateRequest{RackId: n.GetRackId(), NodeId: n.GetNodeId()})
		if err != nil || ps.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || ps.GetPstate() == "UNKNOWN" {
			t.Fatalf("GetPowerState(%s) = %v, %v", n.GetNodeId(), ps, err)
		}
	}

	data, err := os.ReadFile(nodesFile)
	if err != nil {
		t.Fatal(err)
	}
	var set rmspb.NodeSet
	if err := protojson.Unmarshal(data, &set); err != nil || len(set.GetNodes()) != 35 {
		t.Fatalf("nodes file: %d nodes, %v", len(set.GetNodes()), err)
	}
	// The file's nodes work as the nodes of a batch request as they are.
	batch, err := client.BatchGetPowerState(rpcCtx, &rmspb.BatchGetPowerStateRequest{Nodes: &set})
	if err != nil || batch.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(batch.GetNodePowerStates()) != 35 {
		t.Fatalf("BatchGetPowerState(nodes file) = %v, %v", batch.GetResponse(), err)
	}

	d.stop()
	if code := <-d.exit; code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
}
