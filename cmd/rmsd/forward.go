package main

import (
	"context"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/member"
	"github.com/rmsd/rmsd/member/rackpb"
)

// The seam to grpc/forward, the gRPC side of forwarding a rack's calls to
// its owner: serveForward answers, on the owner, a call another member
// forwarded, with the rack's handlers; forwardInterceptor is the receiving
// member's interceptor, which forwards every call that names a rack or a
// job to the rack's owner through the member (member.Member.SendRack).
// Until grpc/forward is part of rmsd, the owner refuses forwarded calls
// and the receiving member forwards none: its own handlers, which have no
// job engine in cluster mode, answer job calls UNAVAILABLE.

// serveForward answers fwd with the handlers over deps.
func serveForward(_ context.Context, _ rmsserver.Deps, fwd *rackpb.Forward, _ zerolog.Logger) *rackpb.ForwardReply {
	return &rackpb.ForwardReply{Code: uint32(codes.Unimplemented), Message: "rmsd: calls forwarded to rack " + fwd.RackId + " are not served by this build"}
}

// forwardInterceptor returns the interceptor that forwards rack calls
// through m; nil while there is none.
func forwardInterceptor(*member.Member, zerolog.Logger) grpc.UnaryServerInterceptor {
	return nil
}
