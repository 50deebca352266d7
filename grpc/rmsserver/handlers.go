package rmsserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
)

// Handlers are the implementations of both RMS services over one set of
// dependencies: what the Server registers, and what a cluster member
// calls without a listener (Invoke) to serve a call another member
// forwarded to it. One Handlers serves any number of calls at once.
type Handlers struct {
	v1  *rackManager
	v2  *rackManagerV2
	log zerolog.Logger
	// methods are both services' unary methods by full method name.
	methods map[string]boundMethod
	// inner is what Invoke runs around a handler: the in-band reasons and
	// panic recovery, as the Server does.
	inner grpc.UnaryServerInterceptor
}

// boundMethod is one generated method handler with the implementation it
// calls.
type boundMethod struct {
	srv  any
	call grpc.MethodHandler
}

// NewHandlers builds the handlers of both services over deps.
func NewHandlers(deps Deps, log zerolog.Logger) *Handlers {
	h := &Handlers{
		v1:      &rackManager{deps: deps, log: log},
		v2:      &rackManagerV2{deps: deps, log: log},
		log:     log,
		methods: map[string]boundMethod{},
	}
	for _, svc := range []struct {
		desc *grpc.ServiceDesc
		impl any
	}{{&rmspb.RackManager_ServiceDesc, h.v1}, {&rmspbv2.RackManagerV2_ServiceDesc, h.v2}} {
		for _, m := range svc.desc.Methods {
			h.methods["/"+svc.desc.ServiceName+"/"+m.MethodName] = boundMethod{srv: svc.impl, call: m.Handler}
		}
	}
	reason, recovered := reasonUnary(log), recoverUnary(log)
	h.inner = func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return reason(ctx, req, info, func(ctx context.Context, req any) (any, error) {
			return recovered(ctx, req, info, handler)
		})
	}
	return h
}

// register registers both services on s.
func (h *Handlers) register(s *grpc.Server) {
	rmspb.RegisterRackManagerServer(s, h.v1)
	rmspbv2.RegisterRackManagerV2Server(s, h.v2)
}

// ErrUnknownMethod: Invoke was asked for a method neither service has.
var ErrUnknownMethod = errors.New("rmsserver: unknown method")

// Invoke runs the handler of fullMethod ("/rack_manager.RackManager/GetJobStatus")
// on req, which must be that method's request type, as the Server would
// for a call over its listener: a panic becomes INTERNAL, and the reason
// of an in-band failure is worked out and logged. The reason is left for
// an outer caller with rpcfields.WithReason on ctx; there is no trailer to
// set. The error is a gRPC status (UNIMPLEMENTED for an unknown method,
// INVALID_ARGUMENT for a request of the wrong type).
func (h *Handlers) Invoke(ctx context.Context, fullMethod string, req proto.Message) (proto.Message, error) {
	m, ok := h.methods[fullMethod]
	if !ok {
		return nil, status.Error(codes.Unimplemented, fmt.Sprintf("%s: %v", fullMethod, ErrUnknownMethod))
	}
	// The generated handler decodes into a request of its own type: dec
	// checks that req has that type, and the interceptor then hands the
	// handler req itself, so nothing is copied.
	dec := func(into any) error {
		if want, got := proto.MessageName(into.(proto.Message)), proto.MessageName(req); want != got {
			return status.Error(codes.InvalidArgument, fmt.Sprintf("%s takes %s, not %s", fullMethod, want, got))
		}
		return nil
	}
	// The call has no stream of its own: a trailer the handlers set must
	// not land on an RPC that ctx may belong to (the caller's).
	ctx = grpc.NewContextWithServerTransportStream(ctx, noStream{method: fullMethod})
	reply, err := m.call(m.srv, ctx, dec, func(ctx context.Context, _ any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return h.inner(ctx, req, info, handler)
	})
	if err != nil {
		return nil, err
	}
	out, ok := reply.(proto.Message)
	if !ok || out == nil {
		return nil, status.Error(codes.Internal, fmt.Sprintf("%s answered no message", fullMethod))
	}
	return out, nil
}

// Has reports whether fullMethod is a method of either service.
func (h *Handlers) Has(fullMethod string) bool {
	_, ok := h.methods[fullMethod]
	return ok
}

// rmsOnly runs inner (chained, the first outermost) around the calls of
// the two RMS services, and no other service's.
func rmsOnly(inner []grpc.UnaryServerInterceptor) grpc.UnaryServerInterceptor {
	chain := inner[len(inner)-1]
	for i := len(inner) - 2; i >= 0; i-- {
		outer, next := inner[i], chain
		chain = func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			return outer(ctx, req, info, func(ctx context.Context, req any) (any, error) {
				return next(ctx, req, info, handler)
			})
		}
	}
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		service, _ := splitMethod(info.FullMethod)
		if service != rmspb.RackManager_ServiceDesc.ServiceName && service != rmspbv2.RackManagerV2_ServiceDesc.ServiceName {
			return handler(ctx, req)
		}
		return chain(ctx, req, info, handler)
	}
}

// RecordReason records reason as the in-band failure of the RPC running
// under ctx, for an interceptor in Options.Inner whose reply came from
// elsewhere (another member): the Server then logs it and sends it as the
// ReasonTrailer trailer, as it does for its own handlers' failures. It
// does nothing for an empty reason, or outside the Server's chain.
func RecordReason(ctx context.Context, reason string) {
	if reason == "" {
		return
	}
	if f, ok := ctx.Value(failuresKey{}).(*inBandFailures); ok {
		f.add(inBandFailure{err: errors.New(reason)})
	}
}

// noStream is the server transport stream of a call Invoke runs: it has
// no headers or trailers to send, and drops what is set.
type noStream struct{ method string }

func (s noStream) Method() string             { return s.method }
func (noStream) SetHeader(metadata.MD) error  { return nil }
func (noStream) SendHeader(metadata.MD) error { return nil }
func (noStream) SetTrailer(metadata.MD) error { return nil }
