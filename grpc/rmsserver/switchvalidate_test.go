package rmsserver

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// refusedCase is one request a switch RPC must refuse before any job: the
// gRPC code and a part of the message a caller reads.
type refusedCase struct {
	name string
	call func() error
	code codes.Code
	says string
}

// assertRefused checks each case's code and message, and that the job
// engine still tracks no job and no switch saw a request.
func (s *simRack) assertRefused(t *testing.T, switches []hw.Node, nvueRequests func(hw.Node) int, cases ...refusedCase) {
	t.Helper()
	for _, c := range cases {
		err := c.call()
		st, _ := status.FromError(err)
		if err == nil || st.Code() != c.code || !strings.Contains(st.Message(), c.says) {
			t.Errorf("%s: %v; want %v saying %q", c.name, err, c.code, c.says)
		}
		if jobs, held := s.engine.Load(); jobs != 0 || held != 0 {
			t.Fatalf("%s: the engine tracks %d jobs and holds %d nodes", c.name, jobs, held)
		}
	}
	for _, n := range switches {
		if got := nvueRequests(n); got != 0 {
			t.Errorf("%s got %d NVUE requests from refused requests", n.ID, got)
		}
	}
}

func svc(s ...rmspb.SwitchService) []rmspb.SwitchService { return s }

// ConfigureSwitchCertificate refuses, with upstream's codes and before any
// job: the domain and its material (FAILED_PRECONDITION), the services, a
// test_hello nothing can answer and no node (INVALID_ARGUMENT). A valid
// request then starts its jobs.
func TestConfigureSwitchCertificate_RefusesWithUpstreamCodes(t *testing.T) {
	a := startCertRack(t, SwitchCertConfig{CertRoot: writeMaterial(t, "site-a"), DefaultDomain: "site-a"})
	sw := a.ofKind(hw.KindSwitch)
	configure := func(req *rmspb.ConfigureSwitchCertificateRequest) func() error {
		return func() error {
			_, err := a.client.ConfigureSwitchCertificate(rpcContext(t), req)
			return err
		}
	}
	nvue := rmspb.SwitchService_SWITCH_SERVICE_NVUE_API
	nodes := nodeSet(sw[0], sw[1])
	a.assertRefused(t, sw[:2], func(n hw.Node) int { return a.nvos(t, n).NVUERequests() },
		refusedCase{"no services", configure(&rmspb.ConfigureSwitchCertificateRequest{Nodes: nodes}),
			codes.InvalidArgument, "services must contain at least one SwitchService"},
		refusedCase{"UNSPECIFIED", configure(&rmspb.ConfigureSwitchCertificateRequest{Nodes: nodes,
			Services: svc(nvue, rmspb.SwitchService_SWITCH_SERVICE_UNSPECIFIED)}),
			codes.InvalidArgument, "services must not include SWITCH_SERVICE_UNSPECIFIED"},
		refusedCase{"undefined service", configure(&rmspb.ConfigureSwitchCertificateRequest{Nodes: nodes, Services: svc(nvue, 9)}),
			codes.InvalidArgument, "invalid SwitchService value: 9"},
		refusedCase{"test_hello with nothing to greet", configure(&rmspb.ConfigureSwitchCertificateRequest{Nodes: nodes, TestHello: true,
			Services: svc(rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY)}),
			codes.InvalidArgument, "test_hello requires SWITCH_SERVICE_NVUE_API"},
		refusedCase{"no nodes", configure(&rmspb.ConfigureSwitchCertificateRequest{Services: bindServices}),
			codes.InvalidArgument, "nodes is required and must contain at least one device"},
		refusedCase{"no material for the domain", configure(&rmspb.ConfigureSwitchCertificateRequest{Nodes: nodes,
			Services: bindServices, Domain: ptr("elsewhere")}),
			codes.FailedPrecondition, "elsewhere/ca.pem"},
		refusedCase{"a domain that is no directory", configure(&rmspb.ConfigureSwitchCertificateRequest{Nodes: nodes,
			Services: bindServices, Domain: ptr("site-a/../x")}),
			codes.FailedPrecondition, "is not a directory name"},
		// Upstream resolves the domain first: a bad domain wins over bad
		// services.
		refusedCase{"bad domain and no services", configure(&rmspb.ConfigureSwitchCertificateRequest{Nodes: nodes, Domain: ptr("a/b")}),
			codes.FailedPrecondition, "is not a directory name"},
	)

	resp, err := a.client.ConfigureSwitchCertificate(rpcContext(t), &rmspb.ConfigureSwitchCertificateRequest{
		Nodes: nodes, Services: svc(nvue), TestHello: true})
	if err != nil || len(resp.GetJobs()) != 2 || resp.GetResponse().GetJobId() == "" {
		t.Fatalf("valid request: %v, %v", resp, err)
	}
	for _, c := range a.waitJobs(t, resp.GetResponse().GetJobId())[1:] {
		if c.GetExecutionState() != completed {
			t.Errorf("child = %v", c)
		}
	}
}

// Without switch_cert_root, or without any domain, the request is
// FAILED_PRECONDITION naming what is missing.
func TestConfigureSwitchCertificate_UnconfiguredRootIsAFailedPrecondition(t *testing.T) {
	a := startCertRack(t, SwitchCertConfig{DefaultDomain: "d"})
	sw := a.ofKind(hw.KindSwitch)
	configure := func(domain *string) func() error {
		return func() error {
			_, err := a.client.ConfigureSwitchCertificate(rpcContext(t), &rmspb.ConfigureSwitchCertificateRequest{
				Nodes: nodeSet(sw[0]), Services: bindServices, Domain: domain})
			return err
		}
	}
	a.assertRefused(t, sw[:1], func(n hw.Node) int { return a.nvos(t, n).NVUERequests() },
		refusedCase{"no root", configure(nil), codes.FailedPrecondition, "[switches] switch_cert_root is not set"})
}

// BatchDisableSwitchMtls refuses bad services and no node with
// INVALID_ARGUMENT, before any job.
func TestBatchDisableSwitchMtls_RefusesWithUpstreamCodes(t *testing.T) {
	a := startCertRack(t, SwitchCertConfig{})
	sw := a.ofKind(hw.KindSwitch)
	disable := func(req *rmspb.BatchDisableSwitchMtlsRequest) func() error {
		return func() error {
			_, err := a.client.BatchDisableSwitchMtls(rpcContext(t), req)
			return err
		}
	}
	a.assertRefused(t, sw[:1], func(n hw.Node) int { return a.nvos(t, n).NVUERequests() },
		refusedCase{"no services", disable(&rmspb.BatchDisableSwitchMtlsRequest{Nodes: nodeSet(sw[0])}),
			codes.InvalidArgument, "services must contain at least one SwitchService"},
		refusedCase{"undefined service", disable(&rmspb.BatchDisableSwitchMtlsRequest{Nodes: nodeSet(sw[0]), Services: svc(42)}),
			codes.InvalidArgument, "invalid SwitchService value: 42"},
		refusedCase{"no nodes", disable(&rmspb.BatchDisableSwitchMtlsRequest{Services: bindServices}),
			codes.InvalidArgument, "nodes is required and must contain at least one device"},
	)
}

// UpdateSwitchSystemPassword refuses a bad user name or password, no node
// and a switch named twice with INVALID_ARGUMENT (NICo's "rejected before
// dispatch"), never quoting the password; a valid request then rotates.
func TestUpdateSwitchSystemPassword_RefusesWithInvalidArgument(t *testing.T) {
	a := startAdminRack(t, fastAdminTiming)
	sw := a.ofKind(hw.KindSwitch)
	rotate := func(user, password string, nodes ...hw.Node) func() error {
		return func() error {
			_, err := a.client.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
				Nodes: nodeSet(nodes...), Username: user, Password: password})
			if err != nil && strings.Contains(err.Error(), secretPassword) {
				t.Errorf("the refusal quotes the password: %v", err)
			}
			return err
		}
	}
	a.assertRefused(t, sw[:2], func(n hw.Node) int { return a.nvos(t, n).NVUERequests() },
		refusedCase{"no username", rotate("", secretPassword, sw[0]), codes.InvalidArgument, "username is required and must be non-empty"},
		refusedCase{"not alphanumeric", rotate("ad-min", secretPassword, sw[0]), codes.InvalidArgument,
			"username may only contain ASCII letters and digits"},
		refusedCase{"no password", rotate("admin", "", sw[0]), codes.InvalidArgument, "password is required and must be non-empty"},
		refusedCase{"control character", rotate("admin", secretPassword+"\n", sw[0]), codes.InvalidArgument, "control characters"},
		refusedCase{"no nodes", rotate("admin", secretPassword), codes.InvalidArgument, "nodes is required and must contain at least one device"},
		refusedCase{"a switch twice", rotate("admin", secretPassword, sw[0], sw[1], sw[0]), codes.InvalidArgument,
			"duplicate switch target in request: rack_id=" + sw[0].RackID + " node_id=" + sw[0].ID},
	)
	resp, err := a.client.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
		Nodes: nodeSet(sw[0], sw[1]), Username: "admin", Password: secretPassword})
	if err != nil || resp.GetResponse().GetJobId() == "" {
		t.Fatalf("valid request: %v, %v", resp, err)
	}
	for _, c := range a.waitJobs(t, resp.GetResponse().GetJobId())[1:] {
		if c.GetExecutionState() != completed {
			t.Errorf("child = %v", c)
		}
	}
}

// SPDM evidence refuses a nonce that is not 32 bytes, no target, a node id
// named twice (whatever its rack) and two targets at one management
// address with INVALID_ARGUMENT, contacting nothing.
func TestSpdm_RefusesWithInvalidArgument(t *testing.T) {
	s := startSpdmRack(t, 0)
	sw := s.ofKind(hw.KindSwitch)
	alias := sw[2]
	alias.ID = "alias-of-" + sw[1].ID
	host := *sw[1].Host
	alias.Host = &host
	otherRack := sw[0]
	otherRack.RackID = "another-rack"
	collect := func(nonce []byte, nodes ...hw.Node) func() error {
		return func() error {
			_, err := s.client.BatchCollectSwitchSpdmAttestationEvidence(rpcContext(t),
				&rmspb.BatchCollectSwitchSpdmAttestationEvidenceRequest{Targets: nodeSet(nodes...).GetNodes(), Nonce: nonce})
			return err
		}
	}
	nonce := newNonce(t)
	s.assertRefused(t, sw[:3], func(n hw.Node) int { return s.nvos(t, n.ID).NVUERequests() },
		refusedCase{"no nonce", collect(nil, sw[0]), codes.InvalidArgument, "SPDM attestation nonce must contain exactly 32 bytes, got 0"},
		refusedCase{"short nonce", collect(nonce[:16], sw[0]), codes.InvalidArgument, "exactly 32 bytes, got 16"},
		refusedCase{"long nonce", collect(bytes.Repeat(nonce, 2)[:33], sw[0]), codes.InvalidArgument, "exactly 32 bytes, got 33"},
		refusedCase{"no targets", collect(nonce), codes.InvalidArgument, "targets is required and must contain at least one switch"},
		refusedCase{"a target twice", collect(nonce, sw[0], sw[1], sw[0]), codes.InvalidArgument,
			"duplicate switch target in request: node_id=" + sw[0].ID},
		refusedCase{"a node id in two racks", collect(nonce, sw[0], otherRack), codes.InvalidArgument,
			"duplicate switch target in request: node_id=" + sw[0].ID},
		refusedCase{"one address twice", collect(nonce, sw[0], sw[1], alias), codes.InvalidArgument,
			"duplicate physical switch target in request: host_ip=" + sw[1].Host.IP},
	)
	resp := s.collectSpdm(t, nonce, sw[0], sw[1])
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetResults()) != 2 {
		t.Fatalf("valid request: %v %q", resp.GetStatus(), resp.GetMessage())
	}
}
