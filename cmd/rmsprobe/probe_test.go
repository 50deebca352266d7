package main

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/test/pki"
)

// serveHealth serves a health service on loopback, with opts (TLS), and
// returns its address and the health server to set statuses on.
func serveHealth(t *testing.T, opts ...grpc.ServerOption) (string, *health.Server) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String(), hs
}

func runProbe(args ...string) (int, string) {
	return runProbeEnv(nil, args...)
}

func runProbeEnv(environ []string, args ...string) (int, string) {
	var out bytes.Buffer
	code := probe(args, environ, &out, &out)
	return code, out.String()
}

func TestProbeExitCodes(t *testing.T) {
	addr, hs := serveHealth(t)
	hs.SetServingStatus("rack_manager.RackManager", healthpb.HealthCheckResponse_SERVING)
	tests := []struct {
		name string
		give []string
		set  func()
		want int
	}{
		{name: "serving", give: []string{"--addr", addr}, want: exitServing},
		{name: "named service serving", give: []string{"--addr", addr, "--service", "rack_manager.RackManager"}, want: exitServing},
		{name: "unknown service", give: []string{"--addr", addr, "--service", "nope"}, want: exitNotServing},
		{name: "draining", give: []string{"--addr", addr}, set: hs.Shutdown, want: exitNotServing},
		{name: "bad flag", give: []string{"--nope"}, want: exitUsage},
		{name: "cert without ca", give: []string{"--addr", addr, "--cert", "c.pem", "--key", "k.pem"}, want: exitUsage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.set != nil {
				tt.set()
			}
			if got, out := runProbe(tt.give...); got != tt.want {
				t.Fatalf("exit %d, want %d; output %q", got, tt.want, out)
			}
		})
	}
}

func TestProbeNothingListening(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close()
	start := time.Now()
	code, out := runProbe("--addr", addr, "--timeout", "300ms")
	if code != exitNotServing || !strings.Contains(out, "DeadlineExceeded") {
		t.Fatalf("exit %d, output %q; want 1 and a deadline", code, out)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Fatalf("took %v, want about the 300ms timeout", elapsed)
	}
}

// TestProbeMTLS checks the probe against rmsd's own mTLS configuration: it
// gets in with a client certificate from the trusted CA and the server's
// name, and not without them.
func TestProbeMTLS(t *testing.T) {
	m := pki.NewMTLS(t, t.TempDir(), "rmsd.test", "client", "rmsd.test")
	caFile, cliCert, cliKey := m.CAFile, m.ClientCert, m.ClientKey
	cfg, err := rmsserver.MTLSConfig(m.ServerCert, m.ServerKey, caFile)
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serveHealth(t, grpc.Creds(credentials.NewTLS(cfg)))

	mtls := []string{"--addr", addr, "--timeout", "2s", "--ca", caFile, "--cert", cliCert, "--key", cliKey}
	if code, out := runProbe(append(mtls, "--server-name", "rmsd.test")...); code != exitServing {
		t.Fatalf("mTLS probe: exit %d, output %q", code, out)
	}
	env := []string{"RMSPROBE_ADDR=" + addr, "RMSPROBE_CA=" + caFile, "RMSPROBE_CERT=" + cliCert,
		"RMSPROBE_KEY=" + cliKey, "RMSPROBE_SERVER_NAME=rmsd.test"}
	if code, out := runProbeEnv(env, "--timeout", "2s"); code != exitServing {
		t.Fatalf("mTLS probe configured by the environment: exit %d, output %q", code, out)
	}
	if code, _ := runProbe(mtls...); code != exitNotServing {
		t.Fatalf("mTLS probe without the server's name: exit %d, want 1", code)
	}
	if code, _ := runProbe("--addr", addr, "--timeout", "500ms"); code != exitNotServing {
		t.Fatalf("plaintext probe of an mTLS server: exit %d, want 1", code)
	}
}
