package main

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/grpc/callerid"
	"github.com/rmsd/rmsd/test/pki"
)

// freePort is a TCP port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestConsoleOnItsOwnPortServesMTLS: with [tls] set, the console's own
// listener is mTLS like the gRPC API; Authorize sees the browser's
// certificate through callerid.FromTLS, a certificate it refuses gets 403
// and a browser without one is turned away in the handshake.
func TestConsoleOnItsOwnPortServesMTLS(t *testing.T) {
	dir := t.TempDir()
	ca := pki.NewCA(t, "console CA")
	srvCert, srvKey := ca.Issue(t, dir, "server", "localhost", x509.ExtKeyUsageServerAuth)
	caFile := filepath.Join(dir, "ca.crt")
	pki.WriteFile(t, caFile, ca.PEM)
	port := freePort(t)
	cfg := writeFile(t, fmt.Sprintf(`
port = 0
[server]
bind_address = "127.0.0.1"
drain_delay_seconds = 0
[metrics]
port = 0
[tls]
cert = %q
key = %q
ca = %q
[console]
enabled = "on"
port = %d
power_refresh_seconds = 0
`, srvCert, srvKey, caFile, port))
	seen := make(chan callerid.Identity, 4)
	startRunWith(t, runOptions{Args: []string{"--config", cfg}, ConsoleAuthorize: func(r *http.Request) error {
		id := callerid.FromTLS(r.TLS, r.RemoteAddr)
		seen <- id
		if id.CommonName != "operator" {
			return errors.New("not an operator")
		}
		return nil
	}})

	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	get := func(certs []tls.Certificate) (int, string, error) {
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
			Certificates: certs, RootCAs: pool, ServerName: "localhost"}}}
		defer c.CloseIdleConnections()
		res, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d/console/", port))
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return res.StatusCode, string(b), err
	}
	client := func(cn string) []tls.Certificate {
		crt, key := ca.IssueIdentity(t, dir, cn, pki.Identity{Subject: pkix.Name{CommonName: cn}}, x509.ExtKeyUsageClientAuth)
		pair, err := tls.LoadX509KeyPair(crt, key)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{pair}
	}

	code, body, err := get(client("operator"))
	if err != nil || code != http.StatusOK || !strings.Contains(body, "<h1>Site</h1>") {
		t.Fatalf("operator: %d %v\n%s", code, err, body)
	}
	if id := <-seen; !id.Verified || id.CommonName != "operator" {
		t.Fatalf("Authorize saw %+v", id)
	}
	if code, body, err := get(client("intruder")); err != nil || code != http.StatusForbidden || strings.Contains(body, "operator") {
		t.Fatalf("intruder: %d %v %q", code, err, body)
	}
	<-seen
	if _, _, err := get(nil); err == nil {
		t.Fatal("a browser without a client certificate was served")
	}
}
