package adminserver

import (
	"context"
	"errors"
	"fmt"
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
	out := &adminpb.ListActorsResponse{HeldNodes: uint32(l.HeldNodes), RegistryGeneration: l.Generation, Waiters: uint32(l.Waiters)}
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
	l, err := s.engine.Actors(ctx)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "job engine: %v", err)
	}
	victims, err := pick(l.Actors, req)
	if err != nil {
		return nil, err
	}
	out := &adminpb.KillActorsResponse{}
	for _, v := range victims {
		err := s.engine.Kill(ctx, v.ID, mode)
		switch {
		case errors.Is(err, actors.ErrUnknownActor):
			continue // ended between the listing and the kill
		case err != nil:
			return out, status.Errorf(codes.Unavailable, "kill %s: %v", v.ID, err)
		}
		s.log.Warn().Str("actor", v.ID).Str("kind", v.Kind).Str("job_id", v.JobID).Stringer("mode", req.GetMode()).Msg("actor killed through the admin service")
		out.Killed = append(out.Killed, toProto(v))
	}
	return out, nil
}

// pick resolves the request's victims: the named actors (each must exist)
// or a random sample of one kind.
func pick(all []actors.ActorInfo, req *adminpb.KillActorsRequest) ([]actors.ActorInfo, error) {
	if ids := req.GetIds(); len(ids) > 0 {
		byID := make(map[string]actors.ActorInfo, len(all))
		for _, a := range all {
			byID[a.ID] = a
		}
		out := make([]actors.ActorInfo, 0, len(ids))
		for _, id := range ids {
			a, ok := byID[id]
			if !ok {
				return nil, status.Error(codes.NotFound, fmt.Sprintf("no actor %q in the job engine", truncate(id)))
			}
			out = append(out, a)
		}
		return out, nil
	}
	var pool []actors.ActorInfo
	for _, a := range all {
		if a.Kind == req.GetKind() {
			pool = append(pool, a)
		}
	}
	n := min(max(int(req.GetCount()), 1), len(pool))
	rand.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
	return pool[:n], nil
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
