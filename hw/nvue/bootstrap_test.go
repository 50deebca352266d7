package nvue_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/test/syncbuf"
)

// siteCA is the CA of a site's switch material: rmsd's client_tls_root
// ca.pem trusts it, and it issues the certificates ConfigureSwitchCertificate
// installs on switches.
type siteCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newSiteCA(t testing.TB) *siteCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "site CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &siteCA{cert: cert, key: key, pool: pool}
}

// issue returns a certificate for the switch names and its PEM files.
func (ca *siteCA) issue(t testing.TB, serial int64, ip string, names ...string) (tls.Certificate, []byte, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: ip},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP(ip)}, DNSNames: names}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	kp, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return kp, certPEM, keyPEM
}

// verifiedPool is rmsd's pool with a client_tls_root identity: mTLS
// verified against the site CA, with the bootstrap fallback.
func verifiedPool(t testing.TB, ca *siteCA, log *syncbuf.Buffer) *nvue.Pool {
	t.Helper()
	client, _, _ := ca.issue(t, 99, "127.0.0.1", "rmsd")
	opts := options()
	opts.TLS, opts.RootCAs, opts.ClientCertificate, opts.BootstrapFallback = nvue.TLSVerify, ca.pool, &client, true
	opts.Logger = zerolog.New(log)
	pool, err := nvue.NewPool(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

func poolClient(t testing.TB, pool *nvue.Pool, ep hw.Endpoint) *nvue.Client {
	t.Helper()
	c, err := pool.Client(ep)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A factory switch serves NVUE with a self-signed certificate: rmsd's
// verified transport fails with an unknown authority, so it bootstraps over
// unverified HTTPS, warning once naming the switch. Once
// ConfigureSwitchCertificate's steps bound the NVUE API to a certificate of
// the site CA, every request is verified again.
func TestBootstrapFallbackForFactorySelfSignedCertificate(t *testing.T) {
	const password = "Factory-Pw-Xq81-NeverLogged"
	r := start(t, nvossim.Config{HostName: "sw-factory", Password: hw.NewSecret(password)}, nil)
	ca := newSiteCA(t)
	var log syncbuf.Buffer
	pool := verifiedPool(t, ca, &log)
	c := poolClient(t, pool, r.sw.Endpoint())

	for range 2 {
		if _, err := c.System(r.ctx); err != nil {
			t.Fatalf("factory switch over the bootstrap fallback: %v", err)
		}
	}
	if got := pool.BootstrapRequests(); got != 2 {
		t.Fatalf("bootstrap requests = %d, want 2", got)
	}
	lines := log.String()
	if n := strings.Count(lines, `"level":"warn"`); n != 1 || !strings.Contains(lines, "sw-factory") ||
		!strings.Contains(lines, "unknown authority") {
		t.Fatalf("want one warning naming the switch and the reason, got %d in:\n%s", n, lines)
	}
	if strings.Contains(lines, password) {
		t.Fatal("the switch password is in the log")
	}

	// Install a site certificate as ConfigureSwitchCertificate does:
	// files on the switch, both imports, the NVUE API bound.
	_, certPEM, keyPEM := ca.issue(t, 2, "127.0.0.1", "sw-factory")
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
	dir := "/home/admin/certs/run1"
	for name, data := range map[string][]byte{"ca.pem": caPEM, "client.pem": certPEM, "client.key": keyPEM} {
		if err := r.sw.PutFile(dir+"/"+name, data); err != nil {
			t.Fatal(err)
		}
	}
	for _, start := range []func() (string, error){
		func() (string, error) { return c.ImportCACertificate(r.ctx, "rms-ca", "file://"+dir+"/ca.pem") },
		func() (string, error) {
			return c.ImportCertificate(r.ctx, "rms-cert", "file://"+dir+"/client.pem", "file://"+dir+"/client.key")
		},
	} {
		id, err := start()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WaitAction(r.ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.BindServiceTLS(r.ctx, "api", "rms-cert", "rms-ca"); err != nil {
		t.Fatal(err)
	}

	before := pool.BootstrapRequests()
	for range 3 {
		if _, err := c.System(r.ctx); err != nil {
			t.Fatalf("after the site certificate was installed: %v", err)
		}
	}
	if got := pool.BootstrapRequests() - before; got != 0 {
		t.Fatalf("%d requests went unverified after the site certificate was installed", got)
	}
}

// A switch whose certificate verifies is never talked to unverified, and
// without the option a certificate failure stays a failure.
func TestBootstrapFallbackNeverWhenVerifiedWorks(t *testing.T) {
	ca := newSiteCA(t)
	crt, _, _ := ca.issue(t, 3, "127.0.0.1", "sw-good")
	r := start(t, nvossim.Config{HostName: "sw-good", Certificate: &crt}, nil)
	var log syncbuf.Buffer
	pool := verifiedPool(t, ca, &log)
	for range 3 {
		if _, err := poolClient(t, pool, r.sw.Endpoint()).System(r.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := pool.BootstrapRequests(); got != 0 || strings.Contains(log.String(), `"level":"warn"`) {
		t.Fatalf("verified switch: %d bootstrap requests, log:\n%s", got, log.String())
	}

	factory := start(t, nvossim.Config{HostName: "sw-factory"}, nil)
	client, _, _ := ca.issue(t, 4, "127.0.0.1", "rmsd")
	opts := options()
	opts.TLS, opts.RootCAs, opts.ClientCertificate = nvue.TLSVerify, ca.pool, &client
	if _, err := newClient(t, factory.sw.Endpoint(), opts).System(factory.ctx); !errors.Is(err, nvue.ErrTransport) ||
		!strings.Contains(err.Error(), "unknown authority") {
		t.Fatalf("self-signed switch without the fallback: %v", err)
	}
}

// A refused connection and a switch that never completes the handshake
// are not certificate errors: no fallback, no warning.
func TestBootstrapFallbackNeverOnOtherFailures(t *testing.T) {
	ca := newSiteCA(t)
	var log syncbuf.Buffer
	client, _, _ := ca.issue(t, 5, "127.0.0.1", "rmsd")
	opts := options()
	opts.TLS, opts.RootCAs, opts.ClientCertificate, opts.BootstrapFallback = nvue.TLSVerify, ca.pool, &client, true
	opts.Logger = zerolog.New(&log)
	opts.RequestTimeout = time.Second
	pool, err := nvue.NewPool(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Refused: a port nothing listens on any more.
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	_, err = poolClient(t, pool, hw.Endpoint{IP: "127.0.0.1", Port: refused}).System(ctx)
	if !errors.Is(err, nvue.ErrTransport) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("refused connection: %v", err)
	}

	// Silent: accepts and never answers the handshake.
	silent, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	wg.Go(func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		_ = silent.Close()
		wg.Wait()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	_, err = poolClient(t, pool, hw.Endpoint{IP: "127.0.0.1", Port: silent.Addr().(*net.TCPAddr).Port}).System(ctx)
	if !errors.Is(err, nvue.ErrTimeout) {
		t.Fatalf("silent switch: %v", err)
	}
	if got := pool.BootstrapRequests(); got != 0 || strings.Contains(log.String(), `"level":"warn"`) {
		t.Fatalf("%d bootstrap requests on non-certificate failures, log:\n%s", got, log.String())
	}
}

// A switch that rejects rmsd's client certificate answers with a
// bad_certificate alert: that is a certificate error, so the fallback is
// tried, and fails since this switch requires a client certificate.
func TestBootstrapFallbackOnBadCertificateAlert(t *testing.T) {
	ca := newSiteCA(t)
	serverCrt, _, _ := ca.issue(t, 7, "127.0.0.1")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"hostname":"strict"}`))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCrt}, ClientAuth: tls.RequireAnyClientCert,
		VerifyPeerCertificate: func([][]byte, [][]*x509.Certificate) error { return errors.New("not our client") }}
	srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	var log syncbuf.Buffer
	pool := verifiedPool(t, ca, &log)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := poolClient(t, pool, hw.Endpoint{IP: "127.0.0.1", Port: port}).System(ctx)
	if !errors.Is(err, nvue.ErrTransport) || !strings.Contains(err.Error(), "bad certificate") ||
		!strings.Contains(err.Error(), "unverified bootstrap") {
		t.Fatalf("rejected client certificate: %v", err)
	}
	if got := pool.BootstrapRequests(); got != 1 {
		t.Fatalf("bootstrap requests = %d, want 1", got)
	}
}

func TestIsCertificateError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}, true},
		{fmt.Errorf("dial: %w", x509.HostnameError{Host: "sw"}), true},
		{tls.AlertError(42), true},
		{x509.CertificateInvalidError{Reason: x509.Expired}, false},
		{tls.AlertError(116), false}, // certificate_required
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, false},
		{context.DeadlineExceeded, false},
		{nil, false},
	} {
		if got := nvue.IsCertificateError(tc.err); got != tc.want {
			t.Errorf("IsCertificateError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// BenchmarkBootstrapRead compares GET /nvue_v1/system on a factory switch
// (each request a failed verified handshake, then a new unverified
// connection) with the same read on a switch whose certificate verifies
// (one pooled mTLS connection), in the same run.
func BenchmarkBootstrapRead(b *testing.B) {
	ca := newSiteCA(b)
	ctx := context.Background()
	run := func(b *testing.B, cfg nvossim.Config) {
		cfg.TimeScale = fast
		sw, err := nvossim.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := sw.Start(ctx, "127.0.0.1"); err != nil {
			b.Fatal(err)
		}
		defer func() { _ = sw.Close() }()
		c := poolClient(b, verifiedPool(b, ca, &syncbuf.Buffer{}), sw.Endpoint())
		for b.Loop() {
			if _, err := c.System(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	good, _, _ := ca.issue(b, 8, "127.0.0.1", "sw-good")
	b.Run("baseline-verified", func(b *testing.B) { run(b, nvossim.Config{HostName: "sw-good", Certificate: &good}) })
	b.Run("factory-bootstrap", func(b *testing.B) { run(b, nvossim.Config{HostName: "sw-factory"}) })
}
