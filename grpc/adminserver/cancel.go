package adminserver

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/messages"
)

// CancelJob implements adminpb.AdminServer: it cancels a leaf's workflow,
// or every open child of a batch parent, with the cause "cancelled by
// operator". The nodes stay held until each workflow has ended.
func (s *service) CancelJob(ctx context.Context, req *adminpb.CancelJobRequest) (*adminpb.CancelJobResponse, error) {
	id := req.GetJobId()
	if id == "" {
		return nil, status.Error(codes.InvalidArgument, "job_id is required")
	}
	rep, err := s.engine.CancelWith(ctx, id, messages.ErrCancelledByOperator)
	switch {
	case errors.Is(err, messages.ErrJobNotFound):
		return nil, status.Errorf(codes.NotFound, "job %s not found", truncate(id))
	case err != nil:
		return nil, status.Errorf(codes.Unavailable, "job engine: %v", err)
	case rep.Terminal:
		return nil, status.Errorf(codes.FailedPrecondition, "job %s has already ended", id)
	}
	s.log.Warn().Str("job_id", id).Int("signalled", rep.Jobs).Msg("job cancelled through the admin service")
	return &adminpb.CancelJobResponse{Signalled: uint32(rep.Jobs)}, nil
}
