package callerid_test

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/rmsd/rmsd/grpc/callerid"
	"github.com/rmsd/rmsd/test/pki"
)

func TestAnHTTPSClientIsNamedByItsVerifiedCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := pki.NewCA(t, "test CA")
	srvCert, srvKey := ca.Issue(t, dir, "server", "localhost", x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := ca.IssueIdentity(t, dir, "client", pki.Identity{
		Subject: pkix.Name{CommonName: "operator", OrganizationalUnit: []string{"noc"}},
	}, x509.ExtKeyUsageClientAuth)
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	sc, err := tls.LoadX509KeyPair(srvCert, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan callerid.Identity, 2)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- callerid.FromTLS(r.TLS, r.RemoteAddr)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{sc}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}
	srv.StartTLS()
	defer srv.Close()
	cc, err := tls.LoadX509KeyPair(cliCert, cliKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, certs := range [][]tls.Certificate{{cc}, nil} {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{
			Certificates: certs, RootCAs: pool, ServerName: "localhost"}}}
		res, err := client.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		client.CloseIdleConnections()
	}
	if id := <-seen; !id.Verified || id.CommonName != "operator" || id.OrganizationalUnit[0] != "noc" || id.Addr == "" {
		t.Fatalf("with a certificate: %+v", id)
	}
	if id := <-seen; id.Verified || id.Addr == "" || id.CommonName != "" {
		t.Fatalf("without a certificate: %+v", id)
	}
	if id := callerid.FromTLS(nil, "10.0.0.1:5"); id.Verified || id.String() != "peer 10.0.0.1:5" {
		t.Fatalf("plaintext: %+v", id)
	}
}
