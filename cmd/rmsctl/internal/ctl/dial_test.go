package ctl

import (
	"bytes"
	"context"
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

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
)

// versionServer answers GetVersion only.
type versionServer struct {
	rmspb.UnimplementedRackManagerServer
}

func (versionServer) GetVersion(context.Context, *rmspb.GetVersionRequest) (*rmspb.GetVersionResponse, error) {
	return &rmspb.GetVersionResponse{Version: "v9.9.9-mtls"}, nil
}

// runCtl runs rmsctl in-process with a config home of its own.
func runCtl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return code, out.String(), errOut.String()
}

// TestMutualTLS dials a server with rmsd's own mTLS configuration: rmsctl
// gets in with --ca, --cert, --key and --server-name (or the same from a
// config file, its paths relative to the file), and not without the
// client certificate or the server's name.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t)
	caFile := filepath.Join(dir, "ca.crt")
	writeTestFile(t, caFile, ca.pem)
	srvCert, srvKey := ca.issue(t, dir, "server", x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth)
	cfg, err := rmsserver.MTLSConfig(srvCert, srvKey, caFile)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(cfg)))
	rmspb.RegisterRackManagerServer(srv, versionServer{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	addr := lis.Addr().String()

	code, out, errOut := runCtl(t, "--addr", addr, "--ca", caFile, "--cert", cliCert, "--key", cliKey, "--server-name", "rmsd.test", "version")
	if code != ExitOK || !strings.Contains(out, "v9.9.9-mtls") || !strings.Contains(out, "(mTLS)") {
		t.Fatalf("version over mTLS: exit %d, %q %q", code, out, errOut)
	}

	config := filepath.Join(dir, "rmsctl.toml")
	writeTestFile(t, config, []byte(`addr = "`+addr+`"
ca = "ca.crt"
cert = "client.crt"
key = "client.key"
server_name = "rmsd.test"
timeout = "5s"
`))
	if code, out, errOut := runCtl(t, "--config", config, "-o", "json", "version"); code != ExitOK || !strings.Contains(out, `"version":"v9.9.9-mtls"`) {
		t.Fatalf("version with the target from a config file: exit %d, %q %q", code, out, errOut)
	}

	for name, args := range map[string][]string{
		"no client certificate": {"--addr", addr, "--ca", caFile, "--server-name", "rmsd.test", "--timeout", "3s", "version"},
		"no server name":        {"--addr", addr, "--ca", caFile, "--cert", cliCert, "--key", cliKey, "--timeout", "3s", "version"},
		"plaintext":             {"--addr", addr, "--timeout", "3s", "version"},
	} {
		if code, _, errOut := runCtl(t, args...); code != ExitUnreachable || !strings.Contains(errOut, addr) {
			t.Errorf("%s: exit %d, %q; want %d naming the address", name, code, errOut, ExitUnreachable)
		}
	}
	if code, _, errOut := runCtl(t, "--addr", addr, "--cert", cliCert, "version"); code != ExitUsage || !strings.Contains(errOut, "--key") {
		t.Errorf("--cert without --key: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCtl(t, "--addr", addr, "--ca", filepath.Join(dir, "client.key"), "version"); code != ExitUsage || !strings.Contains(errOut, "no PEM certificate") {
		t.Errorf("a CA file without a certificate: exit %d, %q", code, errOut)
	}
}

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key := newTestKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "rmsctl test CA"},
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

// issue writes a leaf certificate for rmsd.test (no IP address) and its key
// into dir as name.crt and name.key.
func (ca *testCA) issue(t *testing.T, dir, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key := newTestKey(t)
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
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	writeTestFile(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeTestFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	return certFile, keyFile
}

func newTestKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
