package rmsserver

import (
	"context"
	"errors"
	"slices"

	"github.com/rmsd/rmsd/grpc/authz"
	"github.com/rmsd/rmsd/grpc/rpcfields"
	"github.com/rmsd/rmsd/messages"
)

// requestScope is what a request reaches, for a rack-limited role: the
// racks it names (rack_id and rack_ids fields, its own or of the nodes it
// lists), the racks the registry places the nodes named without a rack in,
// and, for a job status poll (a job_id request), the racks of the job and
// its children, which the job engine tells. A request that names no rack,
// a node the registry cannot place, a job that is unknown or holds no rack,
// or more than rpcfields.Reach reads reaches beyond named racks: it is
// site-wide.
func requestScope(ctx context.Context, deps Deps, req any) (authz.Scope, error) {
	reached, ok := rpcfields.Reach(req)
	if !ok {
		return authz.Scope{SiteWide: true}, nil
	}
	if reached.JobID != "" {
		return jobScope(ctx, deps, reached.JobID)
	}
	siteWide := reached.Partial || reached.HasJobID
	racks := reached.Racks
	if len(reached.Unplaced) > 0 {
		placed, all := placeNodes(deps, reached.Unplaced)
		racks = append(racks, placed...)
		siteWide = siteWide || !all
	}
	slices.Sort(racks)
	return authz.Scope{Racks: slices.Compact(racks), SiteWide: siteWide || len(racks) == 0}, nil
}

// placeNodes is the racks the node registry places nodes in; all is false
// when it does not hold one of them (or there is no registry).
func placeNodes(deps Deps, nodes []string) (racks []string, all bool) {
	if deps.Racks == nil {
		return nil, false
	}
	byID := deps.Racks.RacksOf(nodes)
	all = true
	for _, id := range nodes {
		r, ok := byID[id]
		if !ok {
			all = false
			continue
		}
		racks = append(racks, r...)
	}
	return racks, all
}

// jobScope is the racks of a job and its children.
func jobScope(ctx context.Context, deps Deps, id string) (authz.Scope, error) {
	if deps.Jobs == nil {
		return authz.Scope{}, errJobsUnavailable
	}
	jobs, err := deps.Jobs.Get(ctx, id, true)
	if errors.Is(err, messages.ErrJobNotFound) {
		return authz.Scope{SiteWide: true}, nil
	}
	if err != nil {
		return authz.Scope{}, engineError(err)
	}
	var s authz.Scope
	for _, j := range jobs {
		if j.RackID != "" {
			s.Racks = append(s.Racks, j.RackID)
		}
	}
	slices.Sort(s.Racks)
	s.Racks = slices.Compact(s.Racks)
	s.SiteWide = len(s.Racks) == 0
	return s, nil
}
