package adminserver

import (
	"context"
	"errors"
	"math/rand/v2"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/adminpb"
)

// maxKill bounds one KillActors call.
const maxKill = 1000

// service implements adminpb.AdminServer.
type service struct {
	adminpb.UnimplementedAdminServer
	engine Engine
	log    zerolog.Logger
}

var kinds = map[string]bool{"registry": true, "job": true, "lock": true, "batch": true}

var modes = map[adminpb.KillMode]actors.KillMode{
	adminpb.KillMode_KILL_MODE_STOP:   actors.KillStop,
	adminpb.KillMode_KILL_MODE_POISON: actors.KillPoison,
	adminpb.KillMode_KILL_MODE_CRASH:  actors.KillCrash,
}

// ListActors implements adminpb.AdminServer.
func (s *service) ListActors(ctx context.Context, req *adminpb.ListActorsRequest) (*adminpb.ListActorsResponse, error) {
	kind := req.GetKind()
	if kind != "" && !kinds[kind] {
		return nil, status.Errorf(codes.InvalidArgument, "kind %q is not one of registry, job, lock, batch", kind)
	}
	l, err := s.engine.Actors(ctx)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "job engine: %v", err)
	}
	out := &adminpb.ListActorsResponse{HeldNodes: uint32(l.HeldNodes), RegistryGeneration: l.Generation, Waiters: uint32(l.Waiters),
		Quarantined: quarantinedToProto(l.Quarantined)}
	for _, a := range l.Actors {
		if kind == "" || a.Kind == kind {
			out.Actors = append(out.Actors, toProto(a))
		}
	}
	return out, nil
}

// KillActors implements adminpb.AdminServer.
func (s *service) KillActors(ctx context.Context, req *adminpb.KillActorsRequest) (*adminpb.KillActorsResponse, error) {
	mode, ok := modes[req.GetMode()]
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "mode must be KILL_MODE_STOP, KILL_MODE_POISON or KILL_MODE_CRASH")
	}
	if len(req.GetIds()) == 0 && !kinds[req.GetKind()] {
		return nil, status.Errorf(codes.InvalidArgument, "name actors in ids, or a kind (registry, job, lock, batch) to sample")
	}
	if len(req.GetIds()) > maxKill || req.GetCount() > maxKill {
		return nil, status.Errorf(codes.InvalidArgument, "at most %d actors per call", maxKill)
	}
	ids := req.GetIds()
	if len(ids) == 0 {
		l, err := s.engine.Actors(ctx)
		if err != nil {
			return nil, status.Errorf(codes.Unavailable, "job engine: %v", err)
		}
		ids = sample(l.Actors, req.GetKind(), int(req.GetCount()))
	}
	killed, err := s.engine.Kill(ctx, mode, ids...)
	switch {
	case errors.Is(err, actors.ErrUnknownActor) && len(req.GetIds()) > 0:
		return nil, status.Error(codes.NotFound, truncate(err.Error()))
	case errors.Is(err, actors.ErrUnknownActor): // a sampled actor ended meanwhile
	case err != nil:
		return nil, status.Errorf(codes.Unavailable, "job engine: %v", err)
	}
	out := &adminpb.KillActorsResponse{}
	for _, v := range killed {
		s.log.Warn().Str("actor", v.ID).Str("kind", v.Kind).Str("job_id", v.JobID).Stringer("mode", req.GetMode()).Msg("actor killed through the admin service")
		out.Killed = append(out.Killed, toProto(v))
	}
	return out, nil
}

// sample picks up to count (at least one) random actors of one kind.
func sample(all []actors.ActorInfo, kind string, count int) []string {
	var pool []string
	for _, a := range all {
		if a.Kind == kind {
			pool = append(pool, a.ID)
		}
	}
	rand.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	return pool[:min(max(count, 1), len(pool))]
}

func toProto(a actors.ActorInfo) *adminpb.Actor {
	return &adminpb.Actor{Id: a.ID, Kind: a.Kind, JobId: a.JobID, RackId: a.RackID, NodeId: a.NodeID}
}

// truncate keeps caller text short in errors.
func truncate(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}
