package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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

func TestHelpPrintsUsageAndExitsZero(t *testing.T) {
	for _, arg := range []string{"--help", "-h"} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{arg}, nil, &stdout, &stderr, func([]hw.Node) {
			t.Error("--help must not start the simulator")
		})
		if code != 0 || !strings.Contains(stdout.String(), "Usage: rmssim") || stderr.Len() != 0 {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q; want 0 and the usage on stdout", arg, code, stdout.String(), stderr.String())
		}
	}
}

// TestSecondStartOnTakenPortsLeavesTheNodesFile: a second rmssim on the
// same addresses and ports fails, and the first one's nodes file stays byte
// for byte what the first one wrote.
func TestSecondStartOnTakenPortsLeavesTheNodesFile(t *testing.T) {
	dir := t.TempDir()
	nodesFile := filepath.Join(dir, "nodes.json")
	writeConfig := func(name string) string {
		// Fixed ports on a network of this test's own, so that the second
		// start collides with the first and nothing else.
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(`
[simulator]
network = 96
nodes_file = "`+nodesFile+`"
`), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan []hw.Node, 1)
	exit := make(chan int, 1)
	var stdout, stderr bytes.Buffer
	go func() {
		exit <- run(ctx, []string{"--config", writeConfig("first.toml")}, nil, &stdout, &stderr, func(n []hw.Node) { ready <- n })
	}()
	select {
	case <-ready:
	case code := <-exit:
		t.Fatalf("first rmssim exited %d: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("first rmssim not ready within 30s")
	}
	written, err := os.ReadFile(nodesFile)
	if err != nil {
		t.Fatal(err)
	}

	var stderr2 bytes.Buffer
	code := run(context.Background(), []string{"--config", writeConfig("second.toml")}, nil, io.Discard, &stderr2,
		func([]hw.Node) { t.Error("second rmssim must not start on taken ports") })
	if code != 1 || !strings.Contains(stderr2.String(), "address already in use") {
		t.Fatalf("second start: exit %d, stderr %q; want 1 and the port in use", code, stderr2.String())
	}
	now, err := os.ReadFile(nodesFile)
	if err != nil || !bytes.Equal(now, written) {
		t.Fatalf("a failed second start changed the nodes file (%v)", err)
	}

	cancel()
	if code := <-exit; code != 0 {
		t.Fatalf("first rmssim exit code %d", code)
	}
}
