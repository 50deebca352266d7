package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// TestSimulateConfiguresSwitchCertificatesOnTheDefault runs NICo's
// ConfigureSwitchCertificate flow on `rmsd --simulate` with no switch
// certificate configuration at all, as a new user starts it: the request
// names no domain, so the default domain's material (issued from the
// simulator's CA into a private directory beside the nodes file) is
// installed, the NVUE API and the (enabled) telemetry interface are bound
// to mTLS and greeted. Afterwards rmsd still reaches the switches' gNMI, now over
// mTLS with its own issued identity; the private key is in no log.
func TestSimulateConfiguresSwitchCertificatesOnTheDefault(t *testing.T) {
	dir := t.TempDir()
	nodesFile := filepath.Join(dir, "nodes.json")
	d := startRun(t, nil, "--config", simulateConfig(t, 97, 0, nodesFile), "--simulate")
	client := rmspb.NewRackManagerClient(d.conn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	var nodes rmspb.NodeSet
	readJSON(t, nodesFile, &nodes)
	switches := &rmspb.NodeSet{}
	for _, n := range nodes.GetNodes() {
		if strings.Contains(n.GetNodeId(), "switch") && len(switches.Nodes) < 2 {
			switches.Nodes = append(switches.Nodes, n)
		}
	}
	// The telemetry interface is served once enabled (over TLS, no client
	// certificate yet).
	for _, n := range switches.Nodes {
		tel, err := client.SetScaleUpFabricTelemetryInterfaceState(ctx, &rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest{Node: n, Enable: true})
		if err != nil || tel.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
			t.Fatalf("SetScaleUpFabricTelemetryInterfaceState before the install = %v, %v", tel, err)
		}
	}
	resp, err := client.ConfigureSwitchCertificate(ctx, &rmspb.ConfigureSwitchCertificateRequest{Nodes: switches, TestHello: true,
		Services: []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_NVUE_API,
			rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY_INTERFACE}})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetJobs()) != 2 {
		t.Fatalf("ConfigureSwitchCertificate = %v, %v", resp, err)
	}
	for _, j := range resp.GetJobs() {
		var st *rmspb.GetConfigureSwitchCertificateJobStatusResponse
		pollUntil(t, ctx, "job "+j.GetJobId()+" terminal", func() bool {
			st, err = client.GetConfigureSwitchCertificateJobStatus(ctx, &rmspb.GetConfigureSwitchCertificateJobStatusRequest{JobId: j.GetJobId()})
			return err == nil && (st.GetState() == "completed" || st.GetState() == "failed")
		})
		if st.GetState() != "completed" || !strings.Contains(st.GetResultJson(), `"domain":"simulated"`) ||
			!strings.Contains(st.GetResultJson(), `"test_hello":true`) {
			t.Fatalf("%s: %s %s %s", j.GetNodeId(), st.GetState(), st.GetErrorMessage(), st.GetResultJson())
		}
	}

	// rmsd's gNMI client now needs its identity: the switch demands a
	// client certificate of the installed CA.
	tel, err := client.SetScaleUpFabricTelemetryInterfaceState(ctx, &rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest{
		Node: switches.Nodes[0], Enable: true})
	if err != nil || tel.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("SetScaleUpFabricTelemetryInterfaceState after the install = %v, %v", tel, err)
	}

	tlsDir := filepath.Join(dir, "simulated-switch-tls")
	for _, p := range []string{tlsDir, filepath.Join(tlsDir, "switch"), filepath.Join(tlsDir, "switch", "simulated"),
		filepath.Join(tlsDir, "client"), filepath.Join(tlsDir, "client", "simulated")} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
			t.Errorf("%s: %v, %v; want a 0700 directory", p, fi, err)
		}
	}
	key, err := os.ReadFile(filepath.Join(tlsDir, "switch", "simulated", "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{"switch", "client"} {
		for _, f := range []string{"ca.pem", "client.pem", "client.key"} {
			if fi, err := os.Stat(filepath.Join(tlsDir, root, "simulated", f)); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("%s/%s: %v, %v; want a 0600 file", root, f, fi, err)
			}
		}
	}
	stopRun(t, d)
	body := strings.Split(string(key), "\n")[1]
	for name, out := range map[string]string{"stdout": d.stdout.String(), "stderr": d.stderr.String()} {
		if strings.Contains(out, body) {
			t.Errorf("the switch private key is in the daemon's %s", name)
		}
	}
}
