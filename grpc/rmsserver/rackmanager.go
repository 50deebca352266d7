package rmsserver

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// rackManager implements rack_manager.RackManager. Its methods are spread
// over one file per API area; RPCs not written yet fall through to the
// embedded Unimplemented server (see pending.go).
type rackManager struct {
	rmspb.UnimplementedRackManagerServer
	deps Deps
	log  zerolog.Logger
}

// rackManagerV2 implements rack_manager_v2.RackManagerV2.
type rackManagerV2 struct {
	rmspbv2.UnimplementedRackManagerV2Server
	deps Deps
	log  zerolog.Logger
}

// GetVersion answers the build version. Clients call it first on every new
// connection as a liveness probe, so it touches nothing but memory.
func (m *rackManager) GetVersion(context.Context, *rmspb.GetVersionRequest) (*rmspb.GetVersionResponse, error) {
	return &rmspb.GetVersionResponse{Version: m.deps.Version}, nil
}
