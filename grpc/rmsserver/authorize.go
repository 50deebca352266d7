package rmsserver

import (
	"context"
	"errors"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/grpc/callerid"
)

// Authorization: with a policy ([authz] roles), every RPC but health and
// reflection needs its group (authz.GroupOf) from a role bound to the
// caller's verified client certificate, on every rack the request reaches
// (requestScope). A refusal is PERMISSION_DENIED before the handler runs,
// so nothing is admitted, leased or started, and is logged once at warn.

// authorizeUnary refuses the unary calls policy does not allow.
func authorizeUnary(policy *authz.Policy, deps Deps, log zerolog.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		scope := func() (authz.Scope, error) { return requestScope(ctx, deps, req) }
		if err := authorize(ctx, policy, info.FullMethod, scope, log); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}
}

// authorizeStream refuses the streams policy does not allow. No RMS RPC
// streams: a stream's scope is site-wide (its requests are not read yet).
func authorizeStream(policy *authz.Policy, log zerolog.Logger) grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		scope := func() (authz.Scope, error) { return authz.Scope{SiteWide: true}, nil }
		if err := authorize(ss.Context(), policy, info.FullMethod, scope, log); err != nil {
			return err
		}
		return handler(srv, ss)
	}
}

// authorize decides one call and logs a refusal.
func authorize(ctx context.Context, policy *authz.Policy, method string, scope func() (authz.Scope, error), log zerolog.Logger) error {
	if policy == nil || authz.Open(method) {
		return nil
	}
	caller := callerid.FromContext(ctx)
	group, known := authz.GroupOf(method)
	var err error
	if !known {
		err = &authz.Denied{Caller: caller, Method: method}
	} else {
		err = policy.Authorize(caller, group, scope)
	}
	var denied *authz.Denied
	if errors.As(err, &denied) {
		ev := log.Warn().Str("rpc", method).Str("caller", caller.String())
		if denied.Group != "" {
			ev = ev.Str("permission", string(denied.Group))
		}
		if denied.Rack != "" {
			ev = ev.Str("rack_id", clip(denied.Rack, maxEchoed))
		}
		ev.Msg("permission denied")
	}
	return err
}
