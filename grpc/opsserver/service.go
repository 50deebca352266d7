package opsserver

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/opspb"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// Page sizes.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Jobs is what the job listing asks of the job engine (*actors.Engine
// implements it): the registry, the one owner of job state.
type Jobs interface {
	List(ctx context.Context, q messages.ListJobs) (messages.ListJobsReply, error)
}

// Service is rmsd_ops.Ops.
type Service struct {
	opspb.UnimplementedOpsServer
	audit store.AuditLog
	jobs  Jobs
}

// New returns the service over the store's audit log and the job engine;
// either may be nil, and its RPC then answers UNAVAILABLE.
func New(audit store.AuditLog, jobs Jobs) *Service {
	return &Service{audit: audit, jobs: jobs}
}

// limit is a request's page size.
func limit(n int32) (int, error) {
	switch {
	case n < 0:
		return 0, status.Errorf(codes.InvalidArgument, "limit %d is negative", n)
	case n == 0:
		return DefaultLimit, nil
	case n > MaxLimit:
		return MaxLimit, nil
	}
	return int(n), nil
}

// storeStatus is the status of a failed store read.
func storeStatus(err error) error {
	if errors.Is(err, store.ErrUnavailable) {
		return status.Error(codes.Unavailable, clip(err.Error()))
	}
	return status.Error(codes.Internal, clip(fmt.Sprintf("read the audit log: %v", err)))
}

// engineStatus is the status of a failed job engine call.
func engineStatus(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "job engine did not answer before the deadline")
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "request cancelled")
	case errors.Is(err, messages.ErrEngineClosed), errors.Is(err, messages.ErrRegistryNotReached):
		return status.Error(codes.Unavailable, "job engine is not available: "+clip(err.Error()))
	}
	return status.Error(codes.Internal, "job engine: "+clip(err.Error()))
}

// clip bounds a status message.
func clip(s string) string {
	const most = 1024
	if len(s) <= most {
		return s
	}
	return s[:most] + "…"
}
