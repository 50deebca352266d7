package auditrpc_test

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/audit"
	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/adminserver"
	"github.com/rmsd/rmsd/grpc/auditrpc"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/test/pki"
	"github.com/rmsd/rmsd/test/syncbuf"
)

// denyPower stands in for authorization: inside the audit interceptor, it
// refuses SetPowerState and the read ListNodeInventory.
func denyPower(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	switch info.FullMethod {
	case rmspb.RackManager_SetPowerState_FullMethodName:
		return nil, status.Error(codes.PermissionDenied, "role operators lacks power")
	case rmspb.RackManager_ListNodeInventory_FullMethodName:
		return nil, status.Error(codes.PermissionDenied, "role operators lacks read")
	}
	return handler(ctx, req)
}

// fixture is an rmsd gRPC server over mTLS on a real socket whose audit
// records go to a stream buffer and a SQLite store, and a client dialled
// with a client certificate from a test CA.
type fixture struct {
	client       rmspb.RackManagerClient
	stream, logs *syncbuf.Buffer
	st           *sqlstore.Store
	dbPath       string
	rec          *audit.Recorder
	stop         func()
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	ca := pki.NewCA(t, "audit test CA")
	caFile := filepath.Join(dir, "ca.pem")
	pki.WriteFile(t, caFile, ca.PEM)
	srvCert, srvKey := ca.Issue(t, dir, "server", "localhost", x509.ExtKeyUsageServerAuth)
	spiffe, _ := url.Parse("spiffe://site.example/ns/prov/sa/bmm")
	cliCert, cliKey := ca.IssueIdentity(t, dir, "client", pki.Identity{
		Subject:  pkix.Name{CommonName: "bmm-prod", OrganizationalUnit: []string{"provisioning"}},
		DNSNames: []string{"bmm.site.example"},
		URIs:     []*url.URL{spiffe},
	}, x509.ExtKeyUsageClientAuth)
	serverTLS, err := rmsserver.MTLSConfig(srvCert, srvKey, caFile)
	if err != nil {
		t.Fatal(err)
	}

	f := &fixture{stream: &syncbuf.Buffer{}, logs: &syncbuf.Buffer{}, dbPath: filepath.Join(dir, "rmsd.db")}
	if f.st, err = sqlstore.OpenSQLite(t.Context(), f.dbPath, sqlstore.Options{}); err != nil {
		t.Fatal(err)
	}
	f.rec = audit.New(audit.Options{Stream: zerolog.New(f.stream), Log: zerolog.New(f.logs), Store: f.st})
	srv := rmsserver.New(rmsserver.Options{
		Deps:         rmsserver.Deps{Racks: racks.New(nil)},
		Logger:       zerolog.New(f.logs),
		TLS:          serverTLS,
		Interceptors: []grpc.UnaryServerInterceptor{auditrpc.Unary(f.rec, auditrpc.Mutating), denyPower},
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(credentials.NewTLS(ca.ClientTLS(t, "localhost", cliCert, cliKey))))
	if err != nil {
		t.Fatal(err)
	}
	f.client = rmspb.NewRackManagerClient(conn)
	var once sync.Once
	f.stop = func() {
		once.Do(func() {
			_ = conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			srv.Shutdown(ctx)
			<-served
			f.rec.Close(ctx)
			_ = f.st.Close()
		})
	}
	t.Cleanup(func() { f.stop() })
	return f
}

func rpcContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestMutatingCallsAreRecordedWithTheCertificateIdentityAndNoSecret(t *testing.T) {
	const (
		password    = "Sw1tch-P@ss-7f3a9c"
		bmcPassword = "Bmc-S3cret-44d1"
		token       = "session-token-9be2"
	)
	f := newFixture(t)
	ctx := rpcContext(t)
	keyPEM := "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----"
	switchNode := func(id string, creds *rmspb.Credentials) *rmspb.NodeSet {
		typ := rmspb.NodeType_SWITCH_GB200_NVIDIA
		return &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{{RackId: "rack-7", NodeId: id, Type: &typ,
			BmcEndpoint: &rmspb.Endpoint{Credentials: creds}, HostEndpoint: &rmspb.Endpoint{Credentials: creds}}}}
	}
	userPass := &rmspb.Credentials{Auth: &rmspb.Credentials_UserPass{UserPass: &rmspb.UsernamePassword{Username: "admin", Password: bmcPassword}}}

	passReply, passErr := f.client.UpdateSwitchSystemPassword(ctx, &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: switchNode("switch-1", userPass), Username: "admin", Password: password})
	sessionKey := &rmspb.Credentials{Auth: &rmspb.Credentials_SessionToken{SessionToken: token + keyPEM}}
	certReply, certErr := f.client.ConfigureSwitchCertificate(ctx, &rmspb.ConfigureSwitchCertificateRequest{
		Nodes: switchNode("switch-2", sessionKey)})
	_, err := f.client.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: "rack-7", NodeId: "compute-3", Operation: rmspb.PowerOperation_POWER_OPERATION_OFF})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("SetPowerState: %v, want the stand-in authorization's PERMISSION_DENIED", err)
	}
	// Reads are not audited.
	if _, err := f.client.ListRacks(ctx, &rmspb.ListRacksRequest{}); err != nil {
		t.Fatal(err)
	}
	// This server has no power control (UNAVAILABLE): a read all the same.
	_, _ = f.client.GetPowerState(ctx, &rmspb.GetPowerStateRequest{RackId: "rack-7", NodeId: "compute-3"})
	// A refused read is recorded.
	if _, err := f.client.ListNodeInventory(ctx, &rmspb.ListNodeInventoryRequest{}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("ListNodeInventory: %v, want the stand-in authorization's PERMISSION_DENIED", err)
	}
	f.stop()

	got, err := reopen(t, f.dbPath).ListAudit(t.Context(), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d records, want 4 (two switch calls and the two denials, no allowed read): %+v", len(got), got)
	}
	read, power, cert, pass := got[0], got[1], got[2], got[3]
	if read.Method != rmspb.RackManager_ListNodeInventory_FullMethodName || read.Outcome != "PERMISSION_DENIED" ||
		read.Reason != "role operators lacks read" || !read.CallerVerified {
		t.Errorf("denied read recorded as %+v", read)
	}
	for _, r := range got {
		if !r.CallerVerified || r.CallerCN != "bmm-prod" || r.CallerSubject != "CN=bmm-prod,OU=provisioning" ||
			len(r.CallerOU) != 1 || r.CallerOU[0] != "provisioning" || len(r.CallerDNS) != 1 || r.CallerDNS[0] != "bmm.site.example" ||
			len(r.CallerURIs) != 1 || r.CallerURIs[0] != "spiffe://site.example/ns/prov/sa/bmm" || !strings.HasPrefix(r.CallerAddr, "127.0.0.1:") ||
			!strings.HasPrefix(r.Caller, "CN=bmm-prod,OU=provisioning dns:bmm.site.example") {
			t.Errorf("%s: caller %+v, want the client certificate's identity", r.Method, r)
		}
	}
	if power.Method != rmspb.RackManager_SetPowerState_FullMethodName || power.Outcome != "PERMISSION_DENIED" ||
		power.Reason != "role operators lacks power" || !equal(power.RackIDs, "rack-7") || !equal(power.NodeIDs, "compute-3") {
		t.Errorf("denied call recorded as %+v", power)
	}
	if pass.Method != rmspb.RackManager_UpdateSwitchSystemPassword_FullMethodName || !equal(pass.NodeIDs, "switch-1") ||
		!equal(pass.RackIDs, "rack-7") || pass.Outcome != outcomeOf(passReply.GetResponse().GetStatus(), passErr) {
		t.Errorf("password update (reply %v, error %v) recorded as %+v", passReply, passErr, pass)
	}
	if cert.Method != rmspb.RackManager_ConfigureSwitchCertificate_FullMethodName || !equal(cert.NodeIDs, "switch-2") ||
		cert.Outcome != outcomeOf(certReply.GetResponse().GetStatus(), certErr) {
		t.Errorf("certificate call (reply %v, error %v) recorded as %+v", certReply, certErr, cert)
	}
	t.Logf("password update: %s %q; certificate: %s %q", pass.Outcome, pass.Reason, cert.Outcome, cert.Reason)

	db, err := os.ReadFile(f.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{password, bmcPassword, token, "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg"} {
		for where, text := range map[string]string{"audit stream": f.stream.String(), "server log": f.logs.String(),
			"store file": string(db), "records": formatRecords(got)} {
			if strings.Contains(text, secret) {
				t.Errorf("the secret %q appears in the %s", secret, where)
			}
		}
	}
	if n := strings.Count(f.stream.String(), `"stream":"audit"`); n != len(got) {
		t.Errorf("%d audit stream lines, want %d:\n%s", n, len(got), f.stream.String())
	}
}

// outcomeOf is the outcome the client saw: the gRPC code's name, else
// FAILURE or OK from the reply's status.
func outcomeOf(st rmspb.ReturnCode, err error) string {
	switch {
	case err != nil:
		return strings.ToUpper(snake(status.Code(err).String()))
	case st == rmspb.ReturnCode_RETURN_CODE_FAILURE:
		return "FAILURE"
	default:
		return "OK"
	}
}

func reopen(t *testing.T, path string) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.OpenSQLite(t.Context(), path, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func equal(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func formatRecords(rs []store.AuditRecord) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(strings.Join(append(append(append([]string{r.Caller, r.Method, r.Outcome, r.Reason}, r.RackIDs...), r.NodeIDs...), r.JobIDs...), " "))
		b.WriteByte('\n')
	}
	return b.String()
}

func TestEveryAdminCallIsRecordedRefusalsIncluded(t *testing.T) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	engine, err := actors.New(sys, actors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stream syncbuf.Buffer
	rec := audit.New(audit.Options{Stream: zerolog.New(&stream), Log: zerolog.Nop()})
	srv := adminserver.New(engine, zerolog.Nop(), auditrpc.Unary(rec, auditrpc.All))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	defer func() {
		srv.Stop()
		<-done
		engine.Close()
		sys.Shutdown()
		rec.Close(context.Background())
	}()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	admin := adminpb.NewAdminClient(conn)
	ctx := rpcContext(t)
	if _, err := admin.ListActors(ctx, &adminpb.ListActorsRequest{}); err != nil {
		t.Fatal(err)
	}
	_, cancelErr := admin.CancelJob(ctx, &adminpb.CancelJobRequest{JobId: "no-such-job"})
	lines := strings.Split(strings.TrimSpace(stream.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"rpc":"/rmsd_admin.Admin/ListActors"`) || !strings.Contains(lines[0], `"outcome":"OK"`) ||
		!strings.Contains(lines[0], `"caller":"peer 127.0.0.1:`) || !strings.Contains(lines[1], `"rpc":"/rmsd_admin.Admin/CancelJob"`) {
		t.Fatalf("admin calls in the stream:\n%s", stream.String())
	}
	if want := `"outcome":"` + outcomeOf(rmspb.ReturnCode_RETURN_CODE_SUCCESS, cancelErr) + `"`; !strings.Contains(lines[1], want) {
		t.Errorf("CancelJob answered %v, recorded %s; want %s", cancelErr, lines[1], want)
	}
}

// snake turns a gRPC code's CamelCase name into snake case
// ("PermissionDenied" → "Permission_Denied").
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}
