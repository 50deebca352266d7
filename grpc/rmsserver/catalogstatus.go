package rmsserver

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/hw/firmware/catalog"
)

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
	case errors.Is(err, catalog.ErrClosed):
		return status.Error(codes.Unavailable, "the firmware catalog is closed: rmsd is shutting down")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, msg)
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, msg)
	}
	return status.Error(codes.Internal, "firmware catalog: "+msg)
}
