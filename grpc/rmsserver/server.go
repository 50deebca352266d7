package rmsserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// Options configure a Server.
type Options struct {
	Deps   Deps
	Logger zerolog.Logger
	// TLS secures the listener; nil serves plaintext HTTP/2 with prior
	// knowledge. Callers decide (config.TLS.ChooseTransport) which is allowed.
	TLS       *tls.Config
	Keepalive KeepalivePolicy
	// ObserveRPC, when set, is told of every finished RPC (the metrics);
	// nil observes nothing.
	ObserveRPC RPCObserver
	// Authorizer, when set, refuses the calls its [authz] roles do not
	// allow (PERMISSION_DENIED, logged at warn) before any handler runs;
	// nil allows every call.
	Authorizer *authz.Policy
	// Interceptors run around every unary RPC, outside rmsd's own
	// (logging, in-band reasons, panic recovery) and inside the observer,
	// the first outermost: the audit log, then authorization, so that the
	// audit records authorization's refusals.
	Interceptors []grpc.UnaryServerInterceptor
	// Inner interceptors run innermost, around the RMS services' handlers
	// only: after authorization, the in-band reasons and panic recovery,
	// the first outermost. A cluster member's forwarding goes here, so
	// that the receiving member authorises a call and reports its reason
	// (RecordReason) before another member serves it.
	Inner []grpc.UnaryServerInterceptor
	// Services are served on the same listener beside the RMS services
	// (rmsd's read service), and reported by health under their names.
	Services []Service
}

// Service is one more gRPC service to serve: its description and
// implementation, as a generated Register function would pass them.
type Service struct {
	Desc *grpc.ServiceDesc
	Impl any
}

// Server serves both RMS services, health and reflection on one listener.
type Server struct {
	grpc   *grpc.Server
	health *health.Server
	log    zerolog.Logger
	// extraNames are the names of Options.Services, which health reports
	// on too.
	extraNames []string
}

// serviceNames are the services health reports on, besides the overall ""
// and the extra services.
var serviceNames = []string{
	rmspb.RackManager_ServiceDesc.ServiceName,
	rmspbv2.RackManagerV2_ServiceDesc.ServiceName,
}

// New builds a server. It does not listen yet.
func New(opts Options) *Server {
	if opts.Keepalive.ClientPingInterval <= 0 {
		opts.Keepalive = DefaultKeepalive()
	}
	serverOpts := []grpc.ServerOption{
		grpc.KeepaliveEnforcementPolicy(opts.Keepalive.Enforcement()),
		grpc.KeepaliveParams(opts.Keepalive.Parameters()),
	}
	// Recovery runs innermost so the log line (and the observer, outermost)
	// records the INTERNAL it produces; the reasons of in-band failures are
	// logged and sent as a trailer from the reply the handler answered.
	// Authorization runs inside the log line, which records its refusals'
	// PERMISSION_DENIED, and before anything a handler does.
	// The extra interceptors (the audit log) run outside the log line and
	// authorization, so the audit records authorization's refusals too.
	unary := append(append([]grpc.UnaryServerInterceptor(nil), opts.Interceptors...), logUnary(opts.Logger))
	var stream []grpc.StreamServerInterceptor
	if opts.Authorizer != nil {
		unary = append(unary, authorizeUnary(opts.Authorizer, opts.Deps, opts.Logger))
		stream = append(stream, authorizeStream(opts.Authorizer, opts.Logger))
	}
	unary = append(unary, reasonUnary(opts.Logger), recoverUnary(opts.Logger))
	if len(opts.Inner) > 0 {
		unary = append(unary, rmsOnly(opts.Inner))
	}
	if opts.ObserveRPC != nil {
		unary = append([]grpc.UnaryServerInterceptor{observeUnary(opts.ObserveRPC)}, unary...)
		stream = append([]grpc.StreamServerInterceptor{observeStream(opts.ObserveRPC)}, stream...)
	}
	serverOpts = append(serverOpts, grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))
	if opts.TLS != nil {
		serverOpts = append(serverOpts, grpc.Creds(credentials.NewTLS(opts.TLS)))
	}
	s := &Server{grpc: grpc.NewServer(serverOpts...), health: health.NewServer(), log: opts.Logger}
	NewHandlers(opts.Deps, opts.Logger).register(s.grpc)
	for _, svc := range opts.Services {
		s.grpc.RegisterService(svc.Desc, svc.Impl)
		s.extraNames = append(s.extraNames, svc.Desc.ServiceName)
	}
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
	s.setServing(healthpb.HealthCheckResponse_NOT_SERVING)
	return s
}

func (s *Server) setServing(st healthpb.HealthCheckResponse_ServingStatus) {
	s.health.SetServingStatus("", st)
	for _, name := range append(serviceNames[:len(serviceNames):len(serviceNames)], s.extraNames...) {
		s.health.SetServingStatus(name, st)
	}
}

// Serve marks the server SERVING and serves lis until Shutdown. It returns
// nil after a Shutdown, or the error that stopped the listener.
func (s *Server) Serve(lis net.Listener) error {
	s.setServing(healthpb.HealthCheckResponse_SERVING)
	if err := s.grpc.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("serve gRPC on %s: %w", lis.Addr(), err)
	}
	return nil
}

// MarkNotServing reports every service NOT_SERVING from now on, for good,
// while the listener keeps accepting connections and RPCs keep running: the
// first step of a shutdown, so that load balancers and probes stop sending
// work before connections are refused.
func (s *Server) MarkNotServing() {
	s.health.Shutdown()
}

// Shutdown marks every service NOT_SERVING, stops accepting connections and
// waits for in-flight RPCs until ctx ends; then it closes what is left.
func (s *Server) Shutdown(ctx context.Context) {
	s.MarkNotServing()
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.log.Warn().Msg("grace period over; cancelling the RPCs still running")
		s.grpc.Stop()
		<-done
	}
}
