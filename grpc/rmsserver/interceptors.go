package rmsserver

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
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

// statusPolls are the RPCs callers repeat while they wait for a job. Their
// lines are at debug, so that polling does not bury the info log; a poll
// that fails on the server side is still a warning.
var statusPolls = map[string]bool{
	rmspb.RackManager_GetJobStatus_FullMethodName:                           true,
	rmspb.RackManager_GetFirmwareJobStatus_FullMethodName:                   true,
	rmspb.RackManager_GetSwitchSystemImageJobStatus_FullMethodName:          true,
	rmspb.RackManager_GetConfigureSwitchCertificateJobStatus_FullMethodName: true,
}

// logUnary logs one line per RPC: method, gRPC code, duration in
// milliseconds and peer. Failures other than client mistakes log at warn,
// status polls at debug, the rest at info.
func logUnary(log zerolog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		code := status.Code(err)
		ev := log.WithLevel(rpcLevel(info.FullMethod, code))
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
