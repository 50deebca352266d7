package ctl

import (
	"context"
	"net/url"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// reasonTrailer is the response trailer in which rmsd sends the reason of
// an in-band FAILURE, percent-encoded (rmsserver.ReasonTrailer). Replies
// such as SetPowerState's have no message field: the trailer is where the
// reason is.
const reasonTrailer = "rms-reason"

// trailerReason is the decoded reason of md, "" when there is none. The
// text is printed through rmsctl's escaping like any other reply text.
func trailerReason(md metadata.MD) string {
	v := md.Get(reasonTrailer)
	if len(v) == 0 {
		return ""
	}
	s, err := url.PathUnescape(v[0])
	if err != nil {
		return v[0]
	}
	return s
}

// callReason is call that also returns the reason rmsd sent with an
// in-band FAILURE ("" when none).
func callReason[Req, Resp any](ctx context.Context, a *app, rpc string, req Req,
	method func(rmspb.RackManagerClient, context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, string, error) {
	var resp Resp
	var md metadata.MD
	err := a.invoke(ctx, rpc, func(rctx context.Context, client rmspb.RackManagerClient) (err error) {
		resp, err = method(client, rctx, req, grpc.Trailer(&md))
		return err
	})
	return resp, trailerReason(md), err
}

// orReason is reason, or fallback when rmsd sent none (an rmsd older than
// the trailer).
func orReason(reason, fallback string) string {
	if reason != "" {
		return reason
	}
	return fallback
}

// resultWithReason is a per-node RESULT cell: the status, with the reason of a
// FAILURE.
func resultWithReason(c rmspb.ReturnCode, reason string) string {
	if c == rmspb.ReturnCode_RETURN_CODE_FAILURE && reason != "" {
		return "FAILURE: " + reason
	}
	return code(c)
}
