package adminserver

import (
	"context"
	"net"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/messages"
)

// Engine is what the admin service asks of the job engine (*actors.Engine
// implements it).
type Engine interface {
	Actors(ctx context.Context) (actors.Listing, error)
	Kill(ctx context.Context, mode actors.KillMode, ids ...string) ([]actors.ActorInfo, error)
	ReleaseQuarantined(ctx context.Context, jobID string) (actors.QuarantinedJob, error)
	CancelWith(ctx context.Context, id string, cause error) (messages.CancelJobReply, error)
}

// Server is the admin gRPC server.
type Server struct {
	grpc *grpc.Server
}

// New returns an admin server over engine. interceptors run around every
// call outside the loopback check, the first outermost (the audit log, so
// that refused calls are recorded too).
func New(engine Engine, log zerolog.Logger, interceptors ...grpc.UnaryServerInterceptor) *Server {
	chain := append(append([]grpc.UnaryServerInterceptor(nil), interceptors...), loopbackOnly(log))
	s := grpc.NewServer(grpc.ChainUnaryInterceptor(chain...))
	adminpb.RegisterAdminServer(s, &service{engine: engine, log: log})
	return &Server{grpc: s}
}

// Serve accepts connections on lis until Stop.
func (s *Server) Serve(lis net.Listener) error { return s.grpc.Serve(lis) }

// Stop closes the listener and every connection at once: nothing the admin
// service does is worth waiting for at shutdown.
func (s *Server) Stop() { s.grpc.Stop() }

// loopbackOnly refuses calls from any peer outside the loopback interface,
// whatever address the listener was bound to.
func loopbackOnly(log zerolog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		p, ok := peer.FromContext(ctx)
		if !ok || !isLoopbackAddr(p.Addr) {
			log.Warn().Str("method", info.FullMethod).Stringer("peer", p.Addr).Msg("admin call from outside the loopback interface refused")
			return nil, status.Error(codes.PermissionDenied, "the admin service answers only on the loopback interface")
		}
		return handler(ctx, req)
	}
}

func isLoopbackAddr(a net.Addr) bool {
	tcp, ok := a.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}
