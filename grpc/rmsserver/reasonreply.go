package rmsserver

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/rmsd/rmsd/grpc/callerid"
	"github.com/rmsd/rmsd/grpc/rpcfields"
)

// reasonUnary reports the in-band failures of every unary RPC (see
// reason.go): when the handler answers a reply whose status, or whose
// response's status, is RETURN_CODE_FAILURE, each failure the handler
// recorded is logged (or, when it recorded none, the reply's message with
// the request's rack and node), at warn the first time a caller meets it
// and at debug its repeats (repeatFilter) and the failures logged by the
// member that served the call (loggedelsewhere.go), and the reason is set as the
// ReasonTrailer trailer. A gRPC error is not an in-band failure: logUnary
// reports it.
func reasonUnary(log zerolog.Logger) grpc.UnaryServerInterceptor {
	seen := newRepeatFilter(repeatWindow, maxRemembered, time.Now)
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
		caller := callerKey(callerid.FromContext(ctx))
		for _, f := range failures {
			if f.logged {
				log.Debug().Func(failureFields(info.FullMethod, f)).Bool("logged_elsewhere", true).Msg("request failed in-band")
				continue
			}
			reason := clip(f.err.Error(), maxLogged)
			warn, repeats := seen.warn(failureKey{caller: caller, rpc: info.FullMethod, rack: f.rack, node: f.node, reason: reason})
			switch {
			case !warn:
				log.Debug().Func(failureFields(info.FullMethod, f)).Bool("repeat", true).Msg("request failed in-band")
			case repeats > 0:
				log.Warn().Func(failureFields(info.FullMethod, f)).Int("repeats", repeats).Msg("request failed in-band")
			default:
				logFailure(log, info.FullMethod, f)
			}
		}
		// An error here means the RPC has no server stream (a test calling
		// the interceptor directly): the log has the reason.
		reason := reasonText(failures, node)
		rpcfields.SetReason(ctx, reason)
		_ = grpc.SetTrailer(ctx, metadata.Pairs(ReasonTrailer, encodeReason(reason)))
		return resp, nil
	}
}
