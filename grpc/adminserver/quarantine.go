package adminserver

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/messages"
)

// maxJobID bounds the job id a release names.
const maxJobID = 128

// ReleaseQuarantinedJob implements adminpb.AdminServer: it frees the nodes
// of a job whose cancelled workflow has not returned, on the operator's
// word; the engine logs the release as an audit record.
func (s *service) ReleaseQuarantinedJob(ctx context.Context, req *adminpb.ReleaseQuarantinedJobRequest) (*adminpb.ReleaseQuarantinedJobResponse, error) {
	id := req.GetJobId()
	if id == "" || len(id) > maxJobID {
		return nil, status.Errorf(codes.InvalidArgument, "job_id must be 1 to %d bytes long", maxJobID)
	}
	q, err := s.engine.ReleaseQuarantined(ctx, id)
	switch {
	case errors.Is(err, messages.ErrJobNotFound):
		return nil, status.Errorf(codes.NotFound, "job %s not found", truncate(id))
	case errors.Is(err, actors.ErrNotQuarantined):
		return nil, status.Errorf(codes.FailedPrecondition, "job %s is not quarantined", truncate(id))
	case err != nil:
		return nil, status.Errorf(codes.Unavailable, "job engine: %v", err)
	}
	return &adminpb.ReleaseQuarantinedJobResponse{Job: quarantineToProto(q)}, nil
}

func quarantinedToProto(qs []actors.QuarantinedJob) []*adminpb.QuarantinedJob {
	out := make([]*adminpb.QuarantinedJob, 0, len(qs))
	for _, q := range qs {
		out = append(out, quarantineToProto(q))
	}
	return out
}

func quarantineToProto(q actors.QuarantinedJob) *adminpb.QuarantinedJob {
	return &adminpb.QuarantinedJob{JobId: q.JobID, RackId: q.RackID, NodeId: q.NodeID, State: q.State.String(),
		Held: q.Held, CancelledAt: q.CancelledAt.UTC().Format(time.RFC3339)}
}
