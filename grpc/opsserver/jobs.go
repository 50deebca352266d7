package opsserver

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rmsd/rmsd/grpc/opspb"
	"github.com/rmsd/rmsd/messages"
)

// jobStates are the states a listing may select, by name.
var jobStates = map[string]messages.JobState{
	messages.StateQueued.String():    messages.StateQueued,
	messages.StateRunning.String():   messages.StateRunning,
	messages.StateCompleted.String(): messages.StateCompleted,
	messages.StateFailed.String():    messages.StateFailed,
}

// jobTypes are the names of every job type ("job" for the untyped).
func jobTypes() map[string]bool {
	out := map[string]bool{}
	for t := messages.TypeNone; ; t++ {
		name := t.String()
		if t != messages.TypeNone && name == messages.TypeNone.String() {
			return out // past the last type
		}
		out[name] = true
	}
}

// ListJobs implements opspb.OpsServer.
func (s *Service) ListJobs(ctx context.Context, req *opspb.ListJobsRequest) (*opspb.ListJobsResponse, error) {
	if s.jobs == nil {
		return nil, status.Error(codes.Unavailable, "job engine is not available")
	}
	n, err := limit(req.GetLimit())
	if err != nil {
		return nil, err
	}
	q := messages.ListJobs{Type: req.GetType(), RackID: req.GetRackId(), Limit: n}
	if st := req.GetState(); st != "" {
		var ok bool
		if q.State, ok = jobStates[strings.ToLower(st)]; !ok {
			return nil, status.Errorf(codes.InvalidArgument, "state %q: want queued, running, completed or failed", clip(st))
		}
	}
	if q.Type != "" && !jobTypes()[q.Type] {
		return nil, status.Errorf(codes.InvalidArgument, "type %q is no job type", clip(q.Type))
	}
	if req.GetSince() != nil {
		if err := req.GetSince().CheckValid(); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "since: %v", err)
		}
		q.Since = req.GetSince().AsTime()
	}
	if tok := req.GetPageToken(); tok != "" {
		if q.After, err = decodeJobToken(tok); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "page_token %q is not one this service gave", clip(tok))
		}
	}
	rep, err := s.jobs.List(ctx, q)
	if err != nil {
		return nil, engineStatus(err)
	}
	out := &opspb.ListJobsResponse{Jobs: make([]*opspb.Job, 0, len(rep.Jobs))}
	if !rep.Next.IsZero() {
		out.NextPageToken = encodeJobToken(rep.Next)
	}
	for i := range rep.Jobs {
		j := &rep.Jobs[i]
		out.Jobs = append(out.Jobs, &opspb.Job{
			JobId: j.ID, ParentJobId: j.ParentID, ChildCount: int32(len(j.ChildIDs)), Type: j.Type.String(),
			State: j.State.String(), RackId: j.RackID, NodeId: j.NodeID, Description: j.Description,
			ErrorMessage: j.ErrorMessage, CreatedAt: timestamppb.New(j.CreatedAt), UpdatedAt: timestamppb.New(j.UpdatedAt),
		})
	}
	return out, nil
}

// encodeJobToken is c as an opaque page token.
func encodeJobToken(c messages.JobCursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.CreatedAt.UnixNano(), 10) + "/" + c.ID))
}

func decodeJobToken(tok string) (messages.JobCursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return messages.JobCursor{}, err
	}
	nanos, id, ok := strings.Cut(string(raw), "/")
	ns, err := strconv.ParseInt(nanos, 10, 64)
	if !ok || err != nil || id == "" {
		return messages.JobCursor{}, strconv.ErrSyntax
	}
	return messages.JobCursor{CreatedAt: time.Unix(0, ns).UTC(), ID: id}, nil
}
