package rmsserver

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// This file translates the errors of rmsd's parts into gRPC statuses, for
// RPCs whose replies have no status of their own (in-band refusals are
// built by the handlers).

// errUnavailable answers an RPC whose dependency the server was built
// without (a test server, or a daemon still wiring a subsystem).
func errUnavailable(what string) error {
	return status.Errorf(codes.Unavailable, "%s is not available on this server", what)
}

// engineError maps a failure to reach the job engine (not a lookup result
// or a refusal: a job read, an admission or a lease the engine did not
// answer) to a gRPC status.
func engineError(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "job engine did not answer before the deadline")
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "request cancelled")
	case errors.Is(err, messages.ErrEngineClosed):
		return status.Error(codes.Unavailable, "job engine is shutting down")
	case errors.Is(err, messages.ErrStoreUnavailable):
		return status.Error(codes.Unavailable, clip(err.Error(), maxMessage))
	default:
		return status.Error(codes.Internal, "job engine: "+clip(err.Error(), maxMessage))
	}
}

// catalogStatus translates a firmware catalog error into the gRPC status
// of an RPC whose reply has no status of its own. The catalog's refusals
// are written for the caller and passed on as they are (bounded); a
// storage failure is INTERNAL.
func catalogStatus(err error) error {
	msg := clip(err.Error(), maxMessage)
	switch {
	case errors.Is(err, catalog.ErrInvalid):
		return status.Error(codes.InvalidArgument, msg)
	case errors.Is(err, catalog.ErrNotFound):
		return status.Error(codes.NotFound, msg)
	case errors.Is(err, catalog.ErrExists):
		return status.Error(codes.AlreadyExists, msg)
	case errors.Is(err, catalog.ErrUnavailable), errors.Is(err, catalog.ErrHardwareMismatch):
		return status.Error(codes.FailedPrecondition, msg)
	case errors.Is(err, catalog.ErrClosed):
		return status.Error(codes.Unavailable, "the firmware catalog is closed: rmsd is shutting down")
	case errors.Is(err, store.ErrUnavailable):
		return status.Error(codes.Unavailable, msg)
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, msg)
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, msg)
	}
	return status.Error(codes.Internal, "firmware catalog: "+msg)
}
