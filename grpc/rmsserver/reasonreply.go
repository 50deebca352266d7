package rmsserver

import (
	"context"
	"errors"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
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
		msg, failed := replyFailure(resp)
		if !failed {
			return resp, nil
		}
		rack, node := requestTarget(req)
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
		_ = grpc.SetTrailer(ctx, metadata.Pairs(ReasonTrailer, encodeReason(reasonText(failures, node))))
		return resp, nil
	}
}

// replyFailure says whether reply is an in-band FAILURE (its status field,
// or its response's, is RETURN_CODE_FAILURE) and returns its message or
// error_message.
func replyFailure(reply any) (string, bool) {
	pm, ok := reply.(proto.Message)
	if !ok {
		return "", false
	}
	m := pm.ProtoReflect()
	for range 2 {
		if !m.IsValid() {
			return "", false
		}
		fields := m.Descriptor().Fields()
		if st := fields.ByName("status"); st != nil && st.Enum() != nil {
			v := st.Enum().Values().ByNumber(m.Get(st).Enum())
			if v == nil || v.Name() != "RETURN_CODE_FAILURE" {
				return "", false
			}
			return stringField(m, "message", "error_message"), true
		}
		resp := fields.ByName("response")
		if resp == nil || resp.Message() == nil || !m.Has(resp) {
			return "", false
		}
		m = m.Get(resp).Message()
	}
	return "", false
}

// requestTarget is the rack_id and node_id a request names: its own
// fields, or those of its node field (the scale-up fabric RPCs); empty for
// a batch.
func requestTarget(req any) (rack, node string) {
	pm, ok := req.(proto.Message)
	if !ok {
		return "", ""
	}
	m := pm.ProtoReflect()
	if f := m.Descriptor().Fields().ByName("node"); f != nil && f.Message() != nil && m.Has(f) {
		n := m.Get(f).Message()
		return stringField(n, "rack_id"), stringField(n, "node_id")
	}
	return stringField(m, "rack_id"), stringField(m, "node_id")
}

// stringField is the first non-empty string field of m among names.
func stringField(m protoreflect.Message, names ...protoreflect.Name) string {
	for _, n := range names {
		if f := m.Descriptor().Fields().ByName(n); f != nil && f.Kind() == protoreflect.StringKind && f.Cardinality() != protoreflect.Repeated {
			if s := m.Get(f).String(); s != "" {
				return s
			}
		}
	}
	return ""
}
