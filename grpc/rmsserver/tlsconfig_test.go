package rmsserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// testCA is a throwaway certificate authority for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// serialNumber returns a random certificate serial number.
func serialNumber(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serialNumber(t),
		Subject:               pkix.Name{CommonName: name},
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
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue signs a leaf certificate for a server (with 127.0.0.1 as SAN) or a client.
func (ca *testCA) issue(t *testing.T, name string, server bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serialNumber(t),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func writePEM(t *testing.T, dir, name string, blocks ...*pem.Block) string {
	t.Helper()
	var out []byte
	for _, b := range blocks {
		out = append(out, pem.EncodeToMemory(b)...)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startMTLSServer serves with a certificate from ca and trusts client
// certificates from ca only, loaded from files as the daemon does.
func startMTLSServer(t *testing.T, ca *testCA) string {
	t.Helper()
	dir := t.TempDir()
	leaf := ca.issue(t, "rmsd", true)
	keyDER, err := x509.MarshalPKCS8PrivateKey(leaf.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile := writePEM(t, dir, "server.pem", &pem.Block{Type: "CERTIFICATE", Bytes: leaf.Certificate[0]})
	keyFile := writePEM(t, dir, "server.key", &pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := MTLSConfig(certFile, keyFile, caFile)
	if err != nil {
		t.Fatal(err)
	}
	return startServer(t, Options{Logger: zerolog.Nop(), TLS: cfg, Deps: Deps{Version: "v-mtls"}}).addr
}

func clientTLS(ca *testCA, certs ...tls.Certificate) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return &tls.Config{RootCAs: pool, Certificates: certs, ServerName: "127.0.0.1"}
}

func TestMTLSAcceptsClientCertificateFromTrustedCA(t *testing.T) {
	ca := newTestCA(t, "rms-ca")
	addr := startMTLSServer(t, ca)
	conn := dial(t, addr, clientTLS(ca, ca.issue(t, "provisioner", false)))
	resp, err := rmspb.NewRackManagerClient(conn).GetVersion(rpcContext(t), &rmspb.GetVersionRequest{})
	if err != nil || resp.GetVersion() != "v-mtls" {
		t.Fatalf("GetVersion over mTLS = %v, %v", resp, err)
	}
}

func TestMTLSRefusesClients(t *testing.T) {
	ca := newTestCA(t, "rms-ca")
	other := newTestCA(t, "other-ca")
	addr := startMTLSServer(t, ca)
	tests := []struct {
		name string
		give *tls.Config
	}{
		{"no client certificate", clientTLS(ca)},
		{"certificate from another CA", clientTLS(ca, other.issue(t, "intruder", false))},
		{"TLS 1.2 only", func() *tls.Config {
			c := clientTLS(ca, ca.issue(t, "old-client", false))
			c.MaxVersion = tls.VersionTLS12
			return c
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := dial(t, addr, tt.give)
			_, err := rmspb.NewRackManagerClient(conn).GetVersion(rpcContext(t), &rmspb.GetVersionRequest{})
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("GetVersion = %v, want UNAVAILABLE (handshake refused)", err)
			}
		})
	}
}

func TestPlaintextClientCannotTalkToMTLSServer(t *testing.T) {
	ca := newTestCA(t, "rms-ca")
	conn := dial(t, startMTLSServer(t, ca), nil)
	_, err := rmspb.NewRackManagerClient(conn).GetVersion(rpcContext(t), &rmspb.GetVersionRequest{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("plaintext GetVersion = %v, want UNAVAILABLE", err)
	}
}

func TestMTLSConfigErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := MTLSConfig(filepath.Join(dir, "missing.pem"), filepath.Join(dir, "missing.key"), filepath.Join(dir, "ca.pem")); err == nil {
		t.Fatal("missing certificate files must be an error")
	}
}
