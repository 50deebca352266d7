package rmsserver

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/test/pki"
)

// authzRig is two simulated racks behind an mTLS server with an [authz]
// policy, and a CA that issues the clients' certificates.
type authzRig struct {
	*simRack
	ca   *pki.CA
	dir  string
	addr string
	logs *syncBuffer
}

// startAuthzRig starts the rig; cfg without roles serves with no policy.
// tlsOn false serves plaintext (no caller is verified).
func startAuthzRig(t *testing.T, cfg config.Authz, tlsOn bool) *authzRig {
	t.Helper()
	s, deps := newSimRack(t, sim.Options{TimeScale: 0.001, Racks: 2, Layout: sim.Layout{Compute: 2, Switches: 1, Shelves: 1}})
	policy, err := authz.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &authzRig{simRack: s, ca: pki.NewCA(t, "rms-test-ca"), dir: t.TempDir(), logs: &syncBuffer{}}
	opts := Options{Deps: deps, Logger: zerolog.New(r.logs), Authorizer: policy}
	if tlsOn {
		cert, key := r.ca.Issue(t, r.dir, "rmsd", "localhost", x509.ExtKeyUsageServerAuth)
		caFile := filepath.Join(r.dir, "ca.pem")
		pki.WriteFile(t, caFile, r.ca.PEM)
		if opts.TLS, err = MTLSConfig(cert, key, caFile); err != nil {
			t.Fatal(err)
		}
	}
	ts := startServer(t, opts, registerUnknownService)
	r.addr = ts.addr
	if !tlsOn {
		r.conn = dial(t, ts.addr, nil)
		r.client = rmspb.NewRackManagerClient(r.conn)
	}
	return r
}

// connect dials the rig with a client certificate naming id.
func (r *authzRig) connect(t *testing.T, name string, id pki.Identity) *grpc.ClientConn {
	t.Helper()
	certFile, keyFile := r.ca.IssueIdentity(t, r.dir, name, id, x509.ExtKeyUsageClientAuth)
	return dial(t, r.addr, r.ca.ClientTLS(t, "localhost", certFile, keyFile))
}

func (r *authzRig) as(t *testing.T, name string, id pki.Identity) rmspb.RackManagerClient {
	t.Helper()
	return rmspb.NewRackManagerClient(r.connect(t, name, id))
}

// onRack returns the rack's nodes of kind k (racks in fleet order).
func (r *authzRig) onRack(rack int, k hw.Kind) []hw.Node {
	racks := map[string]int{}
	var out []hw.Node
	for _, n := range r.nodes {
		if _, ok := racks[n.RackID]; !ok {
			racks[n.RackID] = len(racks)
		}
		if racks[n.RackID] == rack && n.Type.Kind() == k {
			out = append(out, n)
		}
	}
	return out
}

// unknownRPC is a stand-in for a service the authorization table does
// not know: a service added to the server without a group.
const unknownRPC = "/rmsd_future.Service/List"

func registerUnknownService(s *grpc.Server) {
	s.RegisterService(&grpc.ServiceDesc{
		ServiceName: "rmsd_future.Service",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "List",
			Handler: func(_ any, ctx context.Context, dec func(any) error, icpt grpc.UnaryServerInterceptor) (any, error) {
				in := &emptypb.Empty{}
				if err := dec(in); err != nil {
					return nil, err
				}
				h := func(context.Context, any) (any, error) { return &emptypb.Empty{}, nil }
				return icpt(ctx, in, &grpc.UnaryServerInfo{FullMethod: unknownRPC}, h)
			}}},
	}, struct{}{})
}

// wantDenied fails unless err is PERMISSION_DENIED saying want.
func wantDenied(t *testing.T, what string, err error, want string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.PermissionDenied || st.Message() != want {
		t.Errorf("%s: got %v %q, want PermissionDenied %q", what, st.Code(), st.Message(), want)
	}
}

func cn(name string) pki.Identity { return pki.Identity{Subject: pkix.Name{CommonName: name}} }

// TestAuthzOperatorPowersButCannotFlash: an operator role with read and
// power may power a node and may not update firmware, reset a switch or
// change its password; the refusals name the missing group and the
// caller, log it at warn, never echo the password, and start nothing.
func TestAuthzOperatorPowersButCannotFlash(t *testing.T) {
	r := startAuthzRig(t, config.Authz{
		Roles:    map[string]config.AuthzRole{"operator": {Permissions: []string{"read", "power"}}},
		Bindings: []config.AuthzBinding{{Roles: []string{"operator"}, CN: "ops-*"}},
	}, true)
	ops := r.as(t, "ops", cn("ops-alice"))
	ctx := rpcContext(t)
	node := r.onRack(0, hw.KindCompute)[0]
	set, err := ops.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: node.RackID, NodeId: node.ID, Operation: rmspb.PowerOperation_POWER_OPERATION_OFF})
	if err != nil || set.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("operator power off: %v %v", set, err)
	}
	// The tray passes through PoweringOff (read UNKNOWN) on its way to OFF.
	eventuallyRPC(t, "the operator to read the tray OFF", func() bool {
		get, err := ops.GetPowerState(ctx, &rmspb.GetPowerStateRequest{RackId: node.RackID, NodeId: node.ID})
		if err != nil {
			t.Fatalf("operator power read: %v", err)
		}
		return get.GetPstate() == "OFF"
	})

	_, err = ops.UpdateFirmware(ctx, &rmspb.UpdateFirmwareRequest{RackId: node.RackID, NodeId: node.ID, Filename: "bmc.fwpkg"})
	wantDenied(t, "UpdateFirmware", err, `permission "firmware" is not granted to CN=ops-alice`)
	switches := r.onRack(0, hw.KindSwitch)
	_, err = ops.BatchResetSwitchFactoryDefault(ctx, &rmspb.BatchResetSwitchFactoryDefaultRequest{Nodes: nodeSet(switches...)})
	wantDenied(t, "BatchResetSwitchFactoryDefault", err, `permission "destructive" is not granted to CN=ops-alice`)
	const secret = "n3w-Switch-Pa55"
	_, err = ops.UpdateSwitchSystemPassword(ctx, &rmspb.UpdateSwitchSystemPasswordRequest{Nodes: nodeSet(switches...), Username: "admin", Password: secret})
	wantDenied(t, "UpdateSwitchSystemPassword", err, `permission "destructive" is not granted to CN=ops-alice`)

	if jobs, held := r.engine.Load(); jobs != 0 || held != 0 {
		t.Errorf("after the refusals the engine tracks %d jobs and holds %d nodes, want none", jobs, held)
	}
	// The refused switch still answers as before: nothing was reset.
	if st, err := ops.GetPowerState(ctx, &rmspb.GetPowerStateRequest{RackId: switches[0].RackID, NodeId: switches[0].ID}); err != nil || st.GetPstate() != "ON" {
		t.Errorf("switch after the refused reset: %v %v", st, err)
	}

	logs := r.logs.String()
	if strings.Contains(logs, secret) {
		t.Error("the log holds the refused request's password")
	}
	var denial string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"message":"permission denied"`) && strings.Contains(line, "UpdateFirmware") {
			denial = line
		}
	}
	for _, want := range []string{`"level":"warn"`, `"caller":"CN=ops-alice"`, `"permission":"firmware"`, `"rpc":"/rack_manager.RackManager/UpdateFirmware"`} {
		if !strings.Contains(denial, want) {
			t.Errorf("denial log line %q lacks %s", denial, want)
		}
	}

	// A certificate from the same CA whose CN the glob does not match has
	// no role at all.
	dev := r.as(t, "dev", cn("dev-bob"))
	_, err = dev.GetVersion(ctx, &rmspb.GetVersionRequest{})
	wantDenied(t, "GetVersion by dev-bob", err, `permission "read" is not granted to CN=dev-bob`)
}

// TestAuthzRackLimitedRole: a role limited to one rack (bound by a URI SAN
// glob) works on its rack and is refused on the other, whether the
// request names the rack, lists nodes of both racks, names a node the
// registry places, polls a job, or names no rack at all.
func TestAuthzRackLimitedRole(t *testing.T) {
	r := startAuthzRig(t, config.Authz{
		Roles: map[string]config.AuthzRole{
			"team-a": {Permissions: []string{"read", "power"}, Racks: []string{"rack-001"}},
		},
		Bindings: []config.AuthzBinding{{Roles: []string{"team-a"}, URI: "spiffe://example.org/team-a/*"}},
	}, true)
	spiffe, err := url.Parse("spiffe://example.org/team-a/bmm")
	if err != nil {
		t.Fatal(err)
	}
	a := r.as(t, "team-a", pki.Identity{Subject: pkix.Name{CommonName: "bmm", OrganizationalUnit: []string{"team-a"}}, URIs: []*url.URL{spiffe}})
	who := "CN=bmm,OU=team-a uri:spiffe://example.org/team-a/bmm"
	ctx := rpcContext(t)
	own, other := r.onRack(0, hw.KindCompute)[0], r.onRack(1, hw.KindCompute)[0]
	if own.RackID != "rack-001" || other.RackID != "rack-002" {
		t.Fatalf("racks %s and %s, the policy expects rack-001 and rack-002", own.RackID, other.RackID)
	}
	if st, err := a.GetPowerState(ctx, &rmspb.GetPowerStateRequest{RackId: own.RackID, NodeId: own.ID}); err != nil || st.GetPstate() == "" {
		t.Fatalf("own rack: %v %v", st, err)
	}
	_, err = a.GetPowerState(ctx, &rmspb.GetPowerStateRequest{RackId: other.RackID, NodeId: other.ID})
	wantDenied(t, "GetPowerState on rack-002", err, `permission "read" on rack "rack-002" is not granted to `+who)
	_, err = a.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(own, other), Operation: rmspb.PowerOperation_POWER_OPERATION_OFF})
	wantDenied(t, "BatchSetPowerState on both racks", err, `permission "power" on rack "rack-002" is not granted to `+who)
	if st, err := a.GetPowerState(ctx, &rmspb.GetPowerStateRequest{RackId: own.RackID, NodeId: own.ID}); err != nil || st.GetPstate() != "ON" {
		t.Errorf("a node of the refused batch changed: %v %v", st, err)
	}
	// A node named without its rack is placed by the registry: the other
	// rack's is refused; the own rack's passes authorization and reaches
	// the handler, which answers it in band.
	_, err = a.SetPowerState(ctx, &rmspb.SetPowerStateRequest{NodeId: other.ID, Operation: rmspb.PowerOperation_POWER_OPERATION_OFF})
	wantDenied(t, "SetPowerState by node id on rack-002", err, `permission "power" on rack "rack-002" is not granted to `+who)
	byID, err := a.SetPowerState(ctx, &rmspb.SetPowerStateRequest{NodeId: own.ID, Operation: rmspb.PowerOperation_POWER_OPERATION_OFF})
	if err != nil || byID.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Errorf("SetPowerState by node id on rack-001: %v %v, want the handler's in-band FAILURE", byID, err)
	}
	// Site-wide requests need an unlimited role.
	_, err = a.ListRacks(ctx, &rmspb.ListRacksRequest{})
	wantDenied(t, "ListRacks", err, `permission "read" on all racks (the request is not limited to named racks) is not granted to `+who)
	// Job status polls: the racks of the job.
	ownJob, _ := r.holdNode(t, r.onRack(0, hw.KindCompute)[1])
	otherJob, _ := r.holdNode(t, r.onRack(1, hw.KindCompute)[1])
	if st, err := a.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: ownJob}); err != nil || len(st.GetJobStates()) == 0 || st.GetJobStates()[0].GetJobId() != ownJob {
		t.Errorf("poll of a rack-001 job: %v %v", st, err)
	}
	_, err = a.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: otherJob})
	wantDenied(t, "poll of a rack-002 job", err, `permission "read" on rack "rack-002" is not granted to `+who)
	_, err = a.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: "no-such-job"})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("poll of an unknown job by a rack-limited role: %v, want PermissionDenied", err)
	}
}

// TestAuthzUnverifiedCallerIsDenied: over plaintext no caller has a
// certificate, so no role; health stays open.
func TestAuthzUnverifiedCallerIsDenied(t *testing.T) {
	r := startAuthzRig(t, config.Authz{
		Roles:    map[string]config.AuthzRole{"all": {Permissions: config.AuthzGroups}},
		Bindings: []config.AuthzBinding{{Roles: []string{"all"}, CN: "*"}},
	}, false)
	ctx := rpcContext(t)
	_, err := r.client.GetVersion(ctx, &rmspb.GetVersionRequest{})
	st := status.Convert(err)
	if st.Code() != codes.PermissionDenied || !strings.HasPrefix(st.Message(), `permission "read" is not granted to peer 127.0.0.1:`) ||
		!strings.HasSuffix(st.Message(), "(no verified client certificate)") {
		t.Errorf("plaintext GetVersion: %v %q", st.Code(), st.Message())
	}
	h, err := healthpb.NewHealthClient(r.conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("health under authz: %v %v", h, err)
	}
	refl, err := reflectionpb.NewServerReflectionClient(r.conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := refl.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	listed, err := refl.Recv()
	if err != nil || len(listed.GetListServicesResponse().GetService()) == 0 {
		t.Errorf("reflection under authz: %v %v", listed, err)
	}
	_ = refl.CloseSend()
}

// TestAuthzUnknownServiceIsDenied: with authz on, an RPC of a service the
// table does not know is refused even to a role with every group.
func TestAuthzUnknownServiceIsDenied(t *testing.T) {
	r := startAuthzRig(t, config.Authz{
		Roles:    map[string]config.AuthzRole{"all": {Permissions: config.AuthzGroups}},
		Bindings: []config.AuthzBinding{{Roles: []string{"all"}, DNS: "*.admins.example.org"}},
	}, true)
	conn := r.connect(t, "root", pki.Identity{Subject: pkix.Name{CommonName: "root"}, DNSNames: []string{"ci.admins.example.org"}})
	ctx := rpcContext(t)
	if _, err := rmspb.NewRackManagerClient(conn).ListRacks(ctx, &rmspb.ListRacksRequest{}); err != nil {
		t.Fatalf("DNS SAN glob binding with every group: %v", err)
	}
	err := conn.Invoke(ctx, unknownRPC, &emptypb.Empty{}, &emptypb.Empty{})
	wantDenied(t, "unknown service", err, "rpc /rmsd_future.Service/List is in no permission group: denied to CN=root dns:ci.admins.example.org")
}

// TestNoAuthzAllowsEverything: without [authz] any verified certificate
// may do anything, as upstream (and so may the unknown service).
func TestNoAuthzAllowsEverything(t *testing.T) {
	r := startAuthzRig(t, config.Authz{}, true)
	conn := r.connect(t, "anyone", cn("anyone"))
	c := rmspb.NewRackManagerClient(conn)
	ctx := rpcContext(t)
	node := r.onRack(1, hw.KindCompute)[0]
	if set, err := c.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: node.RackID, NodeId: node.ID, Operation: rmspb.PowerOperation_POWER_OPERATION_OFF}); err != nil ||
		set.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("power off without authz: %v %v", set, err)
	}
	if _, err := c.ListRacks(ctx, &rmspb.ListRacksRequest{}); err != nil {
		t.Fatalf("ListRacks without authz: %v", err)
	}
	if err := conn.Invoke(ctx, unknownRPC, &emptypb.Empty{}, &emptypb.Empty{}); err != nil {
		t.Fatalf("unknown service without authz: %v", err)
	}
}
