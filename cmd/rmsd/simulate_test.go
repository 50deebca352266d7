package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/sim"
)

// TestSimulateRegistersTheSimulatedRack runs `rmsd --simulate` with no TLS
// switches at all: it must serve on loopback, list the simulated rack and
// its 35 nodes, and write them to the nodes file.
func TestSimulateRegistersTheSimulatedRack(t *testing.T) {
	dir := t.TempDir()
	nodesFile := filepath.Join(dir, "nodes.json")
	cfg := writeFile(t, `
port = 0
[server]
drain_delay_seconds = 0
[simulator]
network = 93
bmc_port = 0
nvue_port = 0
nmx_port = 0
gnmi_port = 0
ssh_port = 0
nodes_file = "`+nodesFile+`"
`)
	d := startRun(t, nil, "--config", cfg, "--simulate")
	addr, stdout := d.addr, d.stdout
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

	stopRun(t, d)
}

// simulateConfig is a --simulate configuration on its own loopback network
// with free device ports, the given gRPC port and nodes file.
func simulateConfig(t *testing.T, network, port int, nodesFile string) string {
	t.Helper()
	return writeFile(t, fmt.Sprintf(`
port = %d
[server]
drain_delay_seconds = 0
[simulator]
network = %d
bmc_port = 0
nvue_port = 0
nmx_port = 0
gnmi_port = 0
ssh_port = 0
nodes_file = %q
`, port, network, nodesFile))
}

// TestSecondStartOnATakenPortLeavesTheNodesFile: a second `rmsd --simulate`
// whose simulation comes up but whose gRPC port is taken fails, and the
// first daemon's nodes file stays byte for byte what the first daemon wrote.
func TestSecondStartOnATakenPortLeavesTheNodesFile(t *testing.T) {
	nodesFile := filepath.Join(t.TempDir(), "nodes.json")
	first := startRun(t, nil, "--config", simulateConfig(t, 92, 0, nodesFile), "--simulate")
	written, err := os.ReadFile(nodesFile)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(first.addr.String())
	takenPort, _ := strconv.Atoi(port)

	var stdout, stderr lockedBuffer
	code := run(context.Background(), runOptions{
		Args:    []string{"--config", simulateConfig(t, 94, takenPort, nodesFile), "--simulate"},
		Environ: withStorage(t, nil),
		Stdout:  &stdout, Stderr: &stderr,
		Ready: func(net.Addr) { t.Error("second daemon must not serve on a taken port") },
	})
	if code != 1 || !strings.Contains(stderr.String(), "listen on 127.0.0.1:"+port) {
		t.Fatalf("second start: exit %d, stderr %q; want 1 and the listen error", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "simulator started") {
		t.Fatalf("the second simulation must have come up for this test to mean anything:\n%s", stdout.String())
	}
	now, err := os.ReadFile(nodesFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(now, written) {
		t.Fatal("a failed second start overwrote the running daemon's nodes file")
	}

	stopRun(t, first)
}

// Under --simulate, [switches] nvue_port is the simulated NVOS hosts' port:
// a switch sent as NICo sends it (host port 0) reaches NVUE. The daemon's
// one NVUE pool serves every RPC: repeated reads of the switch cost it one
// TLS handshake.
func TestSimulateReachesSwitchesGivenWithHostPortZero(t *testing.T) {
	cfg := writeFile(t, `
port = 0
[simulator]
network = 92
bmc_port = 0
nvue_port = 0
nmx_port = 0
gnmi_port = 0
ssh_port = 0
nodes_file = "`+filepath.Join(t.TempDir(), "nodes.json")+`"
`)
	d, client := startSimulated(t, cfg)

	var sw sim.Node
	for _, n := range d.fleet.Nodes() {
		if n.Switch != nil {
			sw = n
			break
		}
	}
	nvos := sw.Switch.(*sim.NVOSHost)
	node := rmsserver.NodeInfoToProto(hw.Node{ID: sw.ID, RackID: sw.RackID, Type: sw.Type, Host: &sw.Host})
	node.HostEndpoint.Port = 0
	before := nvos.NVUEConnections()
	rpcCtx, rpcCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rpcCancel()
	for range 3 {
		resp, err := client.BatchGetNodeDeviceInfo(rpcCtx, &rmspb.BatchGetNodeDeviceInfoRequest{
			Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{node}}})
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetNodeDeviceDetails()) != 1 ||
			resp.GetNodeDeviceDetails()[0].TrayIndex == nil {
			t.Fatalf("BatchGetNodeDeviceInfo(switch on host port 0) = %v, %v", resp, err)
		}
	}
	if got := nvos.NVUEConnections() - before; got != 1 {
		t.Fatalf("3 device-info reads opened %d NVUE connections, want 1", got)
	}
}

// Under --simulate, [switches] ssh_port is the simulated NVOS hosts' SSH
// port too: the daemon's hardware stages switch firmware on a switch sent
// with host port 0.
func TestSimulateStagesSwitchFirmwareOverSSH(t *testing.T) {
	cfg := simulateConfig(t, 98, 0, filepath.Join(t.TempDir(), "nodes.json"))
	d, _ := startSimulated(t, cfg)
	var sw sim.Node
	for _, n := range d.fleet.Nodes() {
		if n.Switch != nil {
			sw = n
			break
		}
	}
	host := sw.Host
	host.Port = 0
	opCtx, opCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer opCancel()
	const file = "bmc-88.0002.1300.fwpkg"
	err := d.hw.runner.One(opCtx, hw.Node{ID: sw.ID, RackID: sw.RackID, Type: sw.Type, Host: &host},
		func(ctx context.Context, _ int, dev platform.Device) error {
			_, err := dev.StartFirmwareUpdate(ctx, platform.FirmwareUpdate{Component: "bmc", FileName: file,
				Body: strings.NewReader("pkg"), Size: 3})
			return err
		})
	if err != nil {
		t.Fatalf("stage switch firmware through the daemon: %v", err)
	}
	if _, ok := sw.Switch.(*sim.NVOSHost).File("/host/fw-images/bmc/" + file); !ok {
		t.Fatal("package not staged on the simulated switch")
	}
}

// startSimulated starts the daemon with --simulate on cfg, in process so
// the test reaches its simulated fleet, and a plaintext client of it; the
// daemon is stopped, and its shutdown checked, when the test ends.
func startSimulated(t *testing.T, cfg string) (*daemon, rmspb.RackManagerClient) {
	t.Helper()
	out := &lockedBuffer{}
	d, err := start(context.Background(), runOptions{
		Args: []string{"--config", cfg, "--simulate"}, Environ: withStorage(t, nil), Stdout: out, Stderr: out})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- d.wait(ctx) }()
	conn, err := grpc.NewClient(d.lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		cancel()
		<-stopped
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = conn.Close()
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return d, rmspb.NewRackManagerClient(conn)
}
