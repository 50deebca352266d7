package nvossim

import (
	"context"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The switch's gNMI server (Config.GNMIPort): Capabilities only, with the
// NVOS login as "username"/"password" metadata, answered only while
// nv set system gnmi-server state enabled is applied (else Unavailable, as
// a closed port would). Once bound to mTLS (a gnmi-server mtls
// ca-certificate), only calls over TLS with a client certificate of that
// CA are answered.

type gnmiServer struct {
	gpb.UnimplementedGNMIServer
	sw *Switch
}

// gnmiVersion is the gNMI version the simulated server reports.
const gnmiVersion = "0.10.0"

func (g *gnmiServer) Capabilities(ctx context.Context, _ *gpb.CapabilityRequest) (*gpb.CapabilityResponse, error) {
	s := g.sw
	if s.isDown() {
		return nil, status.Error(codes.Unavailable, "switch is unreachable")
	}
	md, _ := metadata.FromIncomingContext(ctx)
	first := func(k string) string {
		if v := md.Get(k); len(v) > 0 {
			return v[0]
		}
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.fabricLocked().gnmi {
		return nil, status.Error(codes.Unavailable, "gnmi-server is disabled")
	}
	if ca := s.tlsLocked().bindings["gnmi-server"].ca; ca != "" && !s.clientVerifiedLocked(ctx, ca) {
		return nil, status.Error(codes.Unavailable, "gnmi-server requires mTLS with a client certificate of "+ca)
	}
	name := first("username")
	if s.rejectLogins || s.checkPasswordLocked(name, first("password")) != authOK {
		return nil, status.Error(codes.Unauthenticated, "invalid credentials")
	}
	return &gpb.CapabilityResponse{
		GNMIVersion:        gnmiVersion,
		SupportedEncodings: []gpb.Encoding{gpb.Encoding_JSON, gpb.Encoding_JSON_IETF, gpb.Encoding_PROTO},
		SupportedModels:    []*gpb.ModelData{{Name: "nvidia-nvos", Organization: "NVIDIA", Version: "1.0"}},
	}, nil
}
