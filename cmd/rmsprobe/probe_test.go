package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rmsd/rmsd/grpc/rmsserver"
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
	dir := t.TempDir()
	ca := newCA(t)
	caFile := filepath.Join(dir, "ca.crt")
	writeFile(t, caFile, ca.pem)
	srvCert, srvKey := ca.issue(t, dir, "server", x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth)
	cfg, err := rmsserver.MTLSConfig(srvCert, srvKey, caFile)
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

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T) *testCA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "rmsprobe test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue writes a leaf certificate named rmsd.test (no IP address) and its
// key into dir and returns their paths.
func (ca *testCA) issue(t *testing.T, dir, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key := newKey(t)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{"rmsd.test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile = filepath.Join(dir, name+".crt")
	keyFile = filepath.Join(dir, name+".key")
	writeFile(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	return certFile, keyFile
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
