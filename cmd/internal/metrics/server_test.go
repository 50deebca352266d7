package metrics

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// selfSigned returns a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rmsd-metrics-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

func TestListenServesMetricsOverTLSUntilClosed(t *testing.T) {
	cert, pool := selfSigned(t)
	m := New(Info{TLSMode: "mTLS", PersistenceType: "sqlite"})
	srv, err := Listen("127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, m.Handler(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://" + srv.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !strings.Contains(string(body), `rms_api_config{`) || !strings.Contains(string(body), `tls_mode="mTLS"`) {
		t.Fatalf("GET /metrics over TLS: %v\n%s", err, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Close(ctx)
	if conn, err := net.Dial("tcp", srv.Addr().String()); err == nil {
		conn.Close()
		t.Fatal("listener still open after Close")
	}
}

func TestListenOnAPortInUseFails(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, err = Listen(taken.Addr().String(), nil, New(Info{}).Handler(), zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), "metrics: listen on "+taken.Addr().String()) {
		t.Fatalf("Listen on a taken port: %v", err)
	}
}

func TestProfileRoutesServeTheHeapButNotTheCommandLine(t *testing.T) {
	m := New(Info{TLSMode: "insecure", PersistenceType: "sqlite"})
	srv, err := Listen("127.0.0.1:0", nil, m.Handler(), zerolog.Nop(), ProfileRoutes()...)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := client.Get("http://" + srv.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	if code, body := get("/debug/pprof/heap?debug=1"); code != http.StatusOK || !strings.Contains(body, "heap profile:") {
		t.Errorf("heap profile: %d %.80q", code, body)
	}
	if code, body := get("/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "goroutine profile:") {
		t.Errorf("goroutine profile: %d %.80q", code, body)
	}
	if code, body := get("/debug/pprof/cmdline"); code != http.StatusNotFound {
		t.Errorf("command line: %d %.80q, want 404", code, body)
	}
}
