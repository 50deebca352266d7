package rmsserver

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/test/pki"
)

// BenchmarkAuthorize times the authorization interceptor on a batch of one
// rack's 72 nodes, with a registry of 1,000 nodes, against a same-run
// baseline: marshalling that request, which every call costs anyway. It
// reports authz/marshal: off (no policy), a role without racks (the
// request is not even walked), a rack-limited role over the nodes' rack
// ids, and one over node ids the registry places.
func BenchmarkAuthorize(b *testing.B) {
	const perRack, rackCount = 72, 14
	reg := racks.New(nil)
	var nodes []hw.Node
	for r := range rackCount {
		for i := range perRack {
			nodes = append(nodes, hw.Node{ID: fmt.Sprintf("rack-%02d-n%02d", r, i), RackID: fmt.Sprintf("rack-%02d", r), Type: hw.ComputeGB200Nvidia,
				BMC: &hw.Endpoint{IP: fmt.Sprintf("10.%d.0.%d", r, i+1), Credentials: hw.UserPass("admin", "pw")}})
		}
	}
	for _, err := range reg.Create(nodes) {
		if err != nil {
			b.Fatal(err)
		}
	}
	withRacks := &rmspb.BatchSetPowerStateRequest{Nodes: nodeSet(nodes[:perRack]...)}
	idsOnly := proto.Clone(withRacks).(*rmspb.BatchSetPowerStateRequest)
	for _, n := range idsOnly.GetNodes().GetNodes() {
		n.RackId = ""
	}
	ctx := verifiedContext(b, "ops-alice")
	info := &grpc.UnaryServerInfo{FullMethod: rmspb.RackManager_BatchSetPowerState_FullMethodName}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	policy := func(racks ...string) *authz.Policy {
		p, err := authz.New(config.Authz{Roles: map[string]config.AuthzRole{"ops": {Permissions: []string{"power"}, Racks: racks}},
			Bindings: []config.AuthzBinding{{Roles: []string{"ops"}, CN: "ops-*"}}})
		if err != nil {
			b.Fatal(err)
		}
		return p
	}
	var marshal float64
	b.Run("baseline-marshal", func(b *testing.B) {
		for b.Loop() {
			if _, err := proto.Marshal(withRacks); err != nil {
				b.Fatal(err)
			}
		}
		marshal = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	for _, c := range []struct {
		name   string
		policy *authz.Policy
		req    proto.Message
	}{
		{"off", nil, withRacks},
		{"unlimited-role", policy(), withRacks},
		{"rack-limited-rack-ids", policy("rack-00"), withRacks},
		{"rack-limited-node-ids", policy("rack-00"), idsOnly},
	} {
		b.Run(c.name, func(b *testing.B) {
			call := authorizeUnary(c.policy, Deps{Racks: reg}, zerolog.Nop())
			for b.Loop() {
				if _, err := call(ctx, c.req, info, handler); err != nil {
					b.Fatal(err)
				}
			}
			if marshal > 0 {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/marshal, "authz/marshal")
			}
		})
	}
}

// verifiedContext is an RPC context whose peer presented a verified
// client certificate with common name cn.
func verifiedContext(b *testing.B, cn string) context.Context {
	b.Helper()
	dir := b.TempDir()
	ca := pki.NewCA(b, "bench CA")
	certFile, _ := ca.IssueIdentity(b, dir, "client", pki.Identity{Subject: pkix.Name{CommonName: cn}}, x509.ExtKeyUsageClientAuth)
	raw, err := os.ReadFile(certFile)
	if err != nil {
		b.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		b.Fatal(err)
	}
	var info credentials.TLSInfo
	info.State.VerifiedChains = [][]*x509.Certificate{{cert, ca.Cert}}
	return peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 50000}, AuthInfo: info})
}
