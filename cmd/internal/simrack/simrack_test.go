package simrack

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestNodesFileDescribesTheWholeRack(t *testing.T) {
	cfg := config.Default().Simulator
	cfg.BMCPort, cfg.NVUEPort, cfg.SSHPort, cfg.NMXPort, cfg.GNMIPort = 0, 0, 0, 0, 0 // free ports: tests may run beside a daemon
	cfg.Network = 91
	fleet, err := Start(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()

	path := filepath.Join(t.TempDir(), "nodes.json")
	if err := WriteNodesFile(path, Nodes(fleet)); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("nodes file mode = %v, %v; want 0600", info.Mode(), err)
	}
	data, _ := os.ReadFile(path)
	var set rmspb.NodeSet
	if err := protojson.Unmarshal(data, &set); err != nil {
		t.Fatalf("nodes file is not a NodeSet: %v", err)
	}
	kinds := map[hw.Kind]int{}
	for _, n := range set.GetNodes() {
		kinds[hw.NodeType(n.GetType()).Kind()]++
		if n.GetRackId() == "" || n.GetNodeId() == "" || n.GetBmcEndpoint().GetInterface().GetIpAddress() == "" ||
			n.GetBmcEndpoint().GetPort() == 0 || n.GetBmcEndpoint().GetCredentials().GetUserPass().GetPassword() == "" {
			t.Errorf("incomplete node %v", n)
		}
		if hw.NodeType(n.GetType()).Kind() == hw.KindSwitch && n.GetHostEndpoint().GetInterface().GetIpAddress() == "" {
			t.Errorf("switch %s has no host endpoint", n.GetNodeId())
		}
	}
	if kinds[hw.KindCompute] != 18 || kinds[hw.KindSwitch] != 9 || kinds[hw.KindPowerShelf] != 8 {
		t.Fatalf("a GB200 NVL72 rack is 18 compute, 9 switch, 8 shelf nodes; got %v", kinds)
	}
}
