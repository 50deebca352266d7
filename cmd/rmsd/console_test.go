package main

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/grpc/callerid"
	"github.com/rmsd/rmsd/test/freeport"
	"github.com/rmsd/rmsd/test/pki"
)

// freePort is a TCP port to bind later (test/freeport).
func freePort(t *testing.T) int { return freeport.Port(t) }

// consoleRig is a running rmsd whose console has its own mTLS port,
// and a browser that presents a client certificate of the test CA.
type consoleRig struct {
	t    *testing.T
	dir  string
	ca   *pki.CA
	port int
}

// startConsoleRig starts rmsd with the console on its own port, extra
// appended to the config file, and authorize as runOptions.ConsoleAuthorize.
func startConsoleRig(t *testing.T, extra string, authorize func(r *http.Request) error) *consoleRig {
	t.Helper()
	r := &consoleRig{t: t, dir: t.TempDir(), ca: pki.NewCA(t, "console CA"), port: freePort(t)}
	srvCert, srvKey := r.ca.Issue(t, r.dir, "server", "localhost", x509.ExtKeyUsageServerAuth)
	caFile := filepath.Join(r.dir, "ca.crt")
	pki.WriteFile(t, caFile, r.ca.PEM)
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
`, srvCert, srvKey, caFile, r.port)+extra)
	startRunWith(t, runOptions{Args: []string{"--config", cfg}, ConsoleAuthorize: authorize})
	return r
}

// client is a client certificate naming cn.
func (r *consoleRig) client(cn string) []tls.Certificate {
	r.t.Helper()
	crt, key := r.ca.IssueIdentity(r.t, r.dir, cn, pki.Identity{Subject: pkix.Name{CommonName: cn}}, x509.ExtKeyUsageClientAuth)
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		r.t.Fatal(err)
	}
	return []tls.Certificate{pair}
}

// get fetches the site page presenting certs.
func (r *consoleRig) get(certs []tls.Certificate) (int, string, error) {
	pool := x509.NewCertPool()
	pool.AddCert(r.ca.Cert)
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: certs, RootCAs: pool, ServerName: "localhost"}}}
	defer c.CloseIdleConnections()
	res, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d/console/", r.port))
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, string(b), err
}

// TestConsoleOnItsOwnPortServesMTLS: with [tls] set, the console's own
// listener is mTLS like the gRPC API; Authorize sees the browser's
// certificate through callerid.FromTLS, a certificate it refuses gets 403
// and a browser without one is turned away in the handshake.
func TestConsoleOnItsOwnPortServesMTLS(t *testing.T) {
	seen := make(chan callerid.Identity, 4)
	r := startConsoleRig(t, "", func(r *http.Request) error {
		id := callerid.FromTLS(r.TLS, r.RemoteAddr)
		seen <- id
		if id.CommonName != "operator" {
			return errors.New("not an operator")
		}
		return nil
	})

	code, body, err := r.get(r.client("operator"))
	if err != nil || code != http.StatusOK || !strings.Contains(body, "<h1>Site</h1>") {
		t.Fatalf("operator: %d %v\n%s", code, err, body)
	}
	if id := <-seen; !id.Verified || id.CommonName != "operator" {
		t.Fatalf("Authorize saw %+v", id)
	}
	if code, body, err := r.get(r.client("intruder")); err != nil || code != http.StatusForbidden || strings.Contains(body, "operator") {
		t.Fatalf("intruder: %d %v %q", code, err, body)
	}
	<-seen
	if _, _, err := r.get(nil); err == nil {
		t.Fatal("a browser without a client certificate was served")
	}
}

// TestConsoleNeedsTheSiteWideReadPermissionUnderAuthz: with [authz] roles
// the console asks the policy: a role with read on every rack is served,
// a role without read and a role whose read is limited to one rack (the
// site page shows every rack) get 403.
func TestConsoleNeedsTheSiteWideReadPermissionUnderAuthz(t *testing.T) {
	r := startConsoleRig(t, `
[authz.roles.viewer]
permissions = ["read"]
[authz.roles.operator]
permissions = ["power"]
[authz.roles.rackreader]
permissions = ["read"]
racks = ["rack-001"]

[[authz.bindings]]
roles = ["viewer"]
cn = "dash-*"
[[authz.bindings]]
roles = ["operator"]
cn = "ops"
[[authz.bindings]]
roles = ["rackreader"]
cn = "team-a"
`, nil)
	if code, body, err := r.get(r.client("dash-grafana")); err != nil || code != http.StatusOK || !strings.Contains(body, "<h1>Site</h1>") {
		t.Fatalf("viewer: %d %v\n%s", code, err, body)
	}
	for _, cn := range []string{"ops", "team-a", "nobody"} {
		if code, _, err := r.get(r.client(cn)); err != nil || code != http.StatusForbidden {
			t.Errorf("%s: %d %v, want 403", cn, code, err)
		}
	}
}
