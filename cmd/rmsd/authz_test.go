package main

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/test/pki"
)

// TestRunEnforcesAuthz starts rmsd with mTLS and [authz] from a config
// file: a viewer certificate reads and is refused a node change, another
// certificate of the same CA is refused everything.
func TestRunEnforcesAuthz(t *testing.T) {
	dir := t.TempDir()
	ca := pki.NewCA(t, "rmsd test CA")
	caFile := filepath.Join(dir, "ca.crt")
	pki.WriteFile(t, caFile, ca.PEM)
	srvCert, srvKey := ca.Issue(t, dir, "server", "localhost", x509.ExtKeyUsageServerAuth)
	d := startRun(t, nil, "--config", writeFile(t, `
port = 0
[server]
bind_address = "127.0.0.1"
drain_delay_seconds = 0
[tls]
cert = "`+srvCert+`"
key = "`+srvKey+`"
ca = "`+caFile+`"

[authz.roles.viewer]
permissions = ["read"]

[[authz.bindings]]
roles = ["viewer"]
cn = "dash-*"
`))
	client := func(name string) rmspb.RackManagerClient {
		certFile, keyFile := ca.IssueIdentity(t, dir, name, pki.Identity{Subject: pkix.Name{CommonName: name}}, x509.ExtKeyUsageClientAuth)
		conn, err := grpc.NewClient(d.addr.String(), grpc.WithTransportCredentials(credentials.NewTLS(ca.ClientTLS(t, "localhost", certFile, keyFile))))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		return rmspb.NewRackManagerClient(conn)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	dash := client("dash-grafana")
	if v, err := dash.GetVersion(ctx, &rmspb.GetVersionRequest{}); err != nil || v.GetVersion() == "" {
		t.Fatalf("viewer GetVersion: %v %v", v, err)
	}
	_, err := dash.DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: "r1", NodeId: "n1"})
	if st := status.Convert(err); st.Code() != codes.PermissionDenied || st.Message() != `permission "admin" is not granted to CN=dash-grafana` {
		t.Errorf("viewer DeleteNode: %v %q", st.Code(), st.Message())
	}
	_, err = client("intruder").ListRacks(ctx, &rmspb.ListRacksRequest{})
	if st := status.Convert(err); st.Code() != codes.PermissionDenied || !strings.Contains(st.Message(), "CN=intruder") {
		t.Errorf("unbound certificate ListRacks: %v %q", st.Code(), st.Message())
	}
	on := logLine(t, d.stdout.String(), "authorization on: RPCs need a permission a role bound to the client certificate grants")
	if on["roles"] != float64(1) || on["bindings"] != float64(1) {
		t.Errorf("start line %v", on)
	}
	stopRun(t, d)
	if !strings.Contains(d.stdout.String(), `"permission":"admin"`) {
		t.Errorf("no denial line in the log:\n%s", d.stdout.String())
	}
	// The audit log wraps authorization: the refused DeleteNode is
	// recorded with its caller and the denial.
	denied := logLine(t, d.stdout.String(), "audit")
	if denied["rpc"] != "/rack_manager.RackManager/DeleteNode" || denied["outcome"] != "PERMISSION_DENIED" ||
		denied["caller_cn"] != "dash-grafana" || denied["stream"] != "audit" {
		t.Errorf("audit record of the refused DeleteNode: %v", denied)
	}
}
