package forward

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/grpc/rpcfields"
	"github.com/rmsd/rmsd/member/rackpb"
)

// Serve answers a call another member forwarded to this one, the owner of
// fwd's rack, with the rack's handlers h: it decodes the request by its
// method, runs it under the caller's deadline and metadata, and encodes
// the reply, the status and the reason of an in-band failure. The
// handlers' context ends when Serve returns, so that a batch's children
// start once its answer is produced. It never
// fails: what goes wrong is the reply's status. This member owns the log
// of the call's failure, which it knows the cause of; the receiving
// member logs it at debug only. The caller was authorised
// by the member that received the call; the owner trusts the cluster.
func Serve(ctx context.Context, h *rmsserver.Handlers, fwd *rackpb.Forward, log zerolog.Logger) *rackpb.ForwardReply {
	start := time.Now()
	out := serve(ctx, h, fwd)
	code := codes.Code(out.GetCode())
	ev := log.WithLevel(servedLevel(code))
	if code != codes.OK {
		ev = ev.Str("error", out.GetMessage())
	}
	ev.Str("rpc", fwd.GetMethod()).Str("rack_id", fwd.GetRackId()).Str("from_member", fwd.GetFromMember()).
		Str("caller", fwd.GetCaller()).Str("code", code.String()).Dur("duration_ms", time.Since(start)).
		Msg("forwarded call served")
	return out
}

// servedLevel is the level of the owner's line for a forwarded call that
// ended with code: warn for a server-side failure, which the receiving
// member then logs at debug only (rmsserver.LoggedElsewhere); debug
// otherwise. An in-band failure (code OK) is logged at warn by the
// rack's handlers, with its rack, node and holder job.
func servedLevel(code codes.Code) zerolog.Level {
	switch code {
	case codes.OK, codes.NotFound, codes.InvalidArgument, codes.FailedPrecondition:
		return zerolog.DebugLevel
	}
	return zerolog.WarnLevel
}

func serve(ctx context.Context, h *rmsserver.Handlers, fwd *rackpb.Forward) *rackpb.ForwardReply {
	req := newRequest(fwd.GetMethod())
	if req == nil || !h.Has(fwd.GetMethod()) {
		return errorReply(status.Error(codes.Unimplemented, fmt.Sprintf("method %s is not served here", fwd.GetMethod())))
	}
	if err := proto.Unmarshal(fwd.GetRequest(), req); err != nil {
		return errorReply(status.Error(codes.InvalidArgument, fmt.Sprintf("decode the forwarded %s request: %v", methodName(fwd.GetMethod()), err)))
	}
	// The handlers' context ends when the reply is produced, as gRPC ends
	// a call's once its answer is written: a batch's children wait for it
	// (rmsserver's afterAnswer), and must not wait for the caller's
	// deadline, or forever for a call without one, whatever the context
	// Serve was given.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d := deadlineOf(fwd); !d.IsZero() {
		ctx, cancel = context.WithDeadline(ctx, d)
		defer cancel()
	}
	md := metadata.MD{}
	for k, v := range fwd.GetMetadata() {
		md.Set(k, v)
	}
	ctx = metadata.NewIncomingContext(ctx, md)
	ctx, reason := rpcfields.WithReason(ctx)
	reply, err := h.Invoke(ctx, fwd.GetMethod(), req)
	if err != nil {
		return errorReply(err)
	}
	body, err := proto.Marshal(reply)
	if err != nil {
		return errorReply(status.Error(codes.Internal, fmt.Sprintf("encode the %s reply: %v", methodName(fwd.GetMethod()), err)))
	}
	return &rackpb.ForwardReply{Reply: body, Reason: reason.Text()}
}

// errorReply carries a gRPC error status.
func errorReply(err error) *rackpb.ForwardReply {
	st := status.Convert(err)
	return &rackpb.ForwardReply{Code: uint32(st.Code()), Message: st.Message()}
}
