package callerid_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"net/url"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/rmsd/rmsd/grpc/callerid"
	"github.com/rmsd/rmsd/test/pki"
)

// healthServer records the identity of each caller of Check.
type healthServer struct {
	healthpb.UnimplementedHealthServer
	seen chan callerid.Identity
}

func (h *healthServer) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	h.seen <- callerid.FromContext(ctx)
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}

// serve runs a health server with creds and returns its address and the
// channel its callers' identities arrive on.
func serve(t *testing.T, creds grpc.ServerOption) (string, chan callerid.Identity) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var opts []grpc.ServerOption
	if creds != nil {
		opts = append(opts, creds)
	}
	s := grpc.NewServer(opts...)
	h := &healthServer{seen: make(chan callerid.Identity, 1)}
	healthpb.RegisterHealthServer(s, h)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String(), h.seen
}

func check(t *testing.T, addr string, creds grpc.DialOption) {
	t.Helper()
	conn, err := grpc.NewClient(addr, creds)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err)
	}
}

func TestAnMTLSCallerIsNamedByItsCertificate(t *testing.T) {
	dir := t.TempDir()
	ca := pki.NewCA(t, "test CA")
	srvCert, srvKey := ca.Issue(t, dir, "server", "localhost", x509.ExtKeyUsageServerAuth)
	spiffe, _ := url.Parse("spiffe://site.example/ns/prov/sa/bmm")
	cliCert, cliKey := ca.IssueIdentity(t, dir, "client", pki.Identity{
		Subject:  pkix.Name{CommonName: "bmm-prod", OrganizationalUnit: []string{"provisioning"}},
		DNSNames: []string{"bmm.site.example"},
		URIs:     []*url.URL{spiffe},
	}, x509.ExtKeyUsageClientAuth)

	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	sc, err := tls.LoadX509KeyPair(srvCert, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	addr, seen := serve(t, grpc.Creds(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{sc}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert,
	})))
	cc, err := tls.LoadX509KeyPair(cliCert, cliKey)
	if err != nil {
		t.Fatal(err)
	}
	check(t, addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{cc}, RootCAs: pool, ServerName: "localhost",
	})))

	id := <-seen
	if !id.Verified || id.CommonName != "bmm-prod" {
		t.Fatalf("identity = %+v, want the verified certificate bmm-prod", id)
	}
	if len(id.OrganizationalUnit) != 1 || id.OrganizationalUnit[0] != "provisioning" {
		t.Errorf("OU = %v", id.OrganizationalUnit)
	}
	if len(id.DNSNames) != 1 || id.DNSNames[0] != "bmm.site.example" || len(id.URIs) != 1 || id.URIs[0] != spiffe.String() {
		t.Errorf("SANs = %v %v", id.DNSNames, id.URIs)
	}
	want := "CN=bmm-prod,OU=provisioning dns:bmm.site.example uri:" + spiffe.String()
	if id.String() != want {
		t.Errorf("String() = %q, want %q", id.String(), want)
	}
	if id.Addr == "" {
		t.Error("the peer address is missing")
	}
}

func TestAPlaintextCallerIsNamedByItsAddress(t *testing.T) {
	addr, seen := serve(t, nil)
	check(t, addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	id := <-seen
	if id.Verified || id.CommonName != "" {
		t.Fatalf("identity = %+v, want an unverified peer", id)
	}
	host, _, err := net.SplitHostPort(id.Addr)
	if err != nil || host != "127.0.0.1" {
		t.Fatalf("Addr = %q, want 127.0.0.1:port", id.Addr)
	}
	if id.String() != "peer "+id.Addr {
		t.Errorf("String() = %q", id.String())
	}
}

func TestAnInProcessCallIsUnknown(t *testing.T) {
	if got := callerid.FromContext(context.Background()).String(); got != "unknown" {
		t.Fatalf("String() = %q, want unknown", got)
	}
}
