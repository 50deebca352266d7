package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRmssimServesTheRackAndWritesTheNodesFile(t *testing.T) {
	dir := t.TempDir()
	nodesFile := filepath.Join(dir, "nodes.json")
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(`
[simulator]
network = 95
bmc_port = 0
nvue_port = 0
ssh_port = 0
nodes_file = "`+nodesFile+`"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan []hw.Node, 1)
	exit := make(chan int, 1)
	var stdout, stderr bytes.Buffer
	go func() {
		exit <- run(ctx, []string{"--config", cfg}, nil, &stdout, &stderr, func(n []hw.Node) { ready <- n })
	}()
	var nodes []hw.Node
	select {
	case nodes = <-ready:
	case code := <-exit:
		t.Fatalf("exited %d: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("not ready within 30s")
	}
	if len(nodes) != 35 {
		t.Fatalf("%d nodes, want 35", len(nodes))
	}
	if _, err := os.Stat(nodesFile); err != nil {
		t.Fatalf("nodes file: %v", err)
	}

	// A BMC answers Redfish with the credentials of the nodes file.
	bmc := nodes[0].BMC
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer client.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, "https://"+bmc.Addr(443)+"/redfish/v1/Systems", nil)
	req.SetBasicAuth(bmc.Credentials.Username, bmc.Credentials.Password.Reveal())
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /redfish/v1/Systems = %d", resp.StatusCode)
	}

	cancel()
	if code := <-exit; code != 0 {
		t.Fatalf("exit code %d", code)
	}
}
