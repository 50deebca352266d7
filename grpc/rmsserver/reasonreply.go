package rmsserver

import (
	"context"
	"errors"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/rmsd/rmsd/grpc/rpcfields"
)

// reasonUnary reports the in-band failures of every unary RPC (see
// reason.go): when the handler answers a reply whose status, or whose
// response's status, is RETURN_CODE_FAILURE, each failure the handler
// recorded is logged at warn (or, when it recorded none, the reply's
// message with the request's rack and node), and the reason is set as the
// ReasonTrailer trailer. A gRPC error is not an in-band failure: logUnary
// reports it.
func reasonUnary(log zerolog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		hctx, rec := withFailures(ctx)
		resp, err := handler(hctx, req)
		if err != nil {
			return resp, err
		}
		msg, failed := rpcfields.Failure(resp)
		if !failed {
			return resp, nil
		}
		rack, node := rpcfields.Target(req)
		failures := rec.take()
		if len(failures) == 0 {
			if msg == "" {
				msg = "the reply gives no reason"
			}
			failures = []inBandFailure{{rack: rack, node: node, err: errors.New(msg)}}
		}
		for _, f := range failures {
			logFailure(log, info.FullMethod, f)
		}
		// An error here means the RPC has no server stream (a test calling
		// the interceptor directly): the log has the reason.
		reason := reasonText(failures, node)
		rpcfields.SetReason(ctx, reason)
		_ = grpc.SetTrailer(ctx, metadata.Pairs(ReasonTrailer, encodeReason(reason)))
		return resp, nil
	}
}
