package ctl

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rmsd/rmsd/grpc/opspb"
)

// maxPage is the most records or jobs one read-service page carries.
const maxPage = 1000

// ops is the client of rmsd's read service (rmsd_ops.Ops), on the same
// connection as RackManager.
func (a *app) ops() (opspb.OpsClient, error) {
	if _, err := a.rms(); err != nil {
		return nil, err
	}
	return opspb.NewOpsClient(a.conn), nil
}

// callOps runs one read-service RPC under --timeout and turns its error
// into rmsctl's, as call does for RackManager.
func callOps[Req, Resp any](ctx context.Context, a *app, rpc string, req Req,
	method func(opspb.OpsClient, context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	var resp Resp
	client, err := a.ops()
	if err != nil {
		return resp, err
	}
	rctx, cancel := a.rpcContext(ctx)
	defer cancel()
	resp, err = method(client, rctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return resp, &exitError{code: ExitInterrupted, err: fmt.Errorf("%s: interrupted", rpc)}
		}
		return resp, rpcError(a, rpc, err)
	}
	return resp, nil
}

// sinceFlag is a --since value: an RFC 3339 time, or a duration (1h, 30m)
// meaning that long before now.
type sinceFlag struct {
	t   time.Time
	now func() time.Time
}

func (s *sinceFlag) String() string {
	if s.t.IsZero() {
		return ""
	}
	return s.t.Format(time.RFC3339)
}

func (s *sinceFlag) Set(v string) error {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		s.t = t
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("want an RFC 3339 time (2026-05-06T07:00:00Z) or a duration before now (1h, 90m)")
	}
	now := s.now
	if now == nil {
		now = time.Now
	}
	s.t = now().Add(-d)
	return nil
}

func (s *sinceFlag) Type() string { return "time|duration" }

// timestamp is the flag's time for a request; nil when unset.
func (s *sinceFlag) timestamp() *timestamppb.Timestamp {
	if s.t.IsZero() {
		return nil
	}
	return timestamppb.New(s.t)
}

// pageSize is the page to ask for when limit more items are wanted.
func pageSize(limit int) int32 {
	return int32(min(limit, maxPage))
}

// shortMethod is a full gRPC method without its leading slash and proto
// package: "RackManager/SetPowerState".
func shortMethod(full string) string {
	full = strings.TrimPrefix(full, "/")
	if service, method, ok := strings.Cut(full, "/"); ok {
		if i := strings.LastIndexByte(service, '.'); i >= 0 {
			service = service[i+1:]
		}
		return service + "/" + method
	}
	return full
}
