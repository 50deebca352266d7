package rmsserver

import (
	"context"
	"runtime/debug"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// errPanicked is what a caller sees when a handler panics. The panic value
// stays in the server log: it may hold request data.
var errPanicked = status.Error(codes.Internal, "internal error: the request failed unexpectedly; see the server log")

// recoverUnary turns a handler panic into INTERNAL and keeps the process up.
func recoverUnary(log zerolog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.Error().Str("rpc", info.FullMethod).Interface("panic", p).
					Bytes("stack", debug.Stack()).Msg("rpc handler panicked")
				resp, err = nil, errPanicked
			}
		}()
		return handler(ctx, req)
	}
}

// statusPolls are the RPCs callers repeat while they wait for a job, and
// the health check, which probes repeat all the time. Their
// lines are at debug, so that polling does not bury the info log; a poll
// that fails on the server side is still a warning.
var statusPolls = map[string]bool{
	rmspb.RackManager_GetJobStatus_FullMethodName:                           true,
	rmspb.RackManager_GetFirmwareJobStatus_FullMethodName:                   true,
	rmspb.RackManager_GetSwitchSystemImageJobStatus_FullMethodName:          true,
	rmspb.RackManager_GetConfigureSwitchCertificateJobStatus_FullMethodName: true,
	// Probes (kubelet, load balancers, rmsprobe) ask every few seconds.
	healthpb.Health_Check_FullMethodName: true,
}

// logUnary logs one line per RPC: method, gRPC code, duration in
// milliseconds and peer. Failures other than client mistakes log at warn
// (at debug when the member that served the call logged them:
// LoggedElsewhere), status polls and health checks at debug, the rest at
// info.
func logUnary(log zerolog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		code := status.Code(err)
		level, elsewhere := rpcLevel(info.FullMethod, code), loggedElsewhere(err)
		if elsewhere && level == zerolog.WarnLevel {
			level = zerolog.DebugLevel // the member that served the call warned
		}
		ev := log.WithLevel(level)
		if elsewhere {
			ev = ev.Bool("logged_elsewhere", true)
		}
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			ev = ev.Str("peer", p.Addr.String())
		}
		ev.Str("rpc", info.FullMethod).Str("code", code.String()).
			Dur("duration_ms", time.Since(start)).Msg("rpc")
		return resp, err
	}
}

// rpcLevel is the level of an RPC's log line.
func rpcLevel(method string, code codes.Code) zerolog.Level {
	switch code {
	case codes.OK, codes.NotFound, codes.InvalidArgument, codes.AlreadyExists, codes.Unimplemented, codes.Canceled, codes.FailedPrecondition:
	default:
		return zerolog.WarnLevel
	}
	if statusPolls[method] {
		return zerolog.DebugLevel
	}
	return zerolog.InfoLevel
}

// RPCObserver is told of every finished RPC: its service (e.g.
// "rack_manager.RackManager"), method, gRPC code and duration. It runs on
// the RPC's goroutine and must be cheap (a histogram observation).
type RPCObserver func(service, method string, code codes.Code, elapsed time.Duration)

// observeUnary reports every unary RPC to obs, with the code its caller
// sees (a recovered panic included).
func observeUnary(obs RPCObserver) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		service, method := splitMethod(info.FullMethod)
		obs(service, method, status.Code(err), time.Since(start))
		return resp, err
	}
}

// observeStream reports every streaming RPC (health watches, reflection)
// to obs when it ends.
func observeStream(obs RPCObserver) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		start := time.Now()
		err := handler(srv, ss)
		service, method := splitMethod(info.FullMethod)
		obs(service, method, status.Code(err), time.Since(start))
		return err
	}
}

// splitMethod splits "/package.Service/Method" into its service and
// method; a name without that shape is all method.
func splitMethod(full string) (service, method string) {
	full = strings.TrimPrefix(full, "/")
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "unknown", full
}
