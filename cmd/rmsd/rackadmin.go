package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/messages"
)

// rackAdmin is the admin service's engine in cluster mode: the job
// engines of the racks this member owns right now, seen as one. Listing
// unites their actors (held nodes and waiters summed), Kill sends each id
// to the engine that supervises it, and a job is cancelled or released by
// the engine that knows it. A rack joins when its grain opens its service
// and leaves when the service closes or is abandoned; what the admin
// service shows is therefore this member's part of the cluster only.
type rackAdmin struct {
	mu      sync.Mutex
	engines map[string]*actors.Engine // by rack
}

func newRackAdmin() *rackAdmin { return &rackAdmin{engines: map[string]*actors.Engine{}} }

// add records rack's engine.
func (a *rackAdmin) add(rack string, e *actors.Engine) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.engines[rack] = e
}

// remove forgets rack's engine e (and not a newer one of the same rack).
func (a *rackAdmin) remove(rack string, e *actors.Engine) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.engines[rack] == e {
		delete(a.engines, rack)
	}
}

// current returns the engines, by rack id order.
func (a *rackAdmin) current() []*actors.Engine {
	a.mu.Lock()
	defer a.mu.Unlock()
	racks := make([]string, 0, len(a.engines))
	for r := range a.engines {
		racks = append(racks, r)
	}
	slices.Sort(racks)
	out := make([]*actors.Engine, 0, len(racks))
	for _, r := range racks {
		out = append(out, a.engines[r])
	}
	return out
}

// Actors implements adminserver.Engine. An engine closed meanwhile (its
// rack handed over) has no actors left and is skipped.
func (a *rackAdmin) Actors(ctx context.Context) (actors.Listing, error) {
	var out actors.Listing
	for _, e := range a.current() {
		l, err := e.Actors(ctx)
		if errors.Is(err, messages.ErrEngineClosed) {
			continue
		}
		if err != nil {
			return actors.Listing{}, err
		}
		out.Actors = append(out.Actors, l.Actors...)
		out.HeldNodes += l.HeldNodes
		out.Waiters += l.Waiters
		out.Generation += l.Generation
		out.Quarantined = append(out.Quarantined, l.Quarantined...)
	}
	return out, nil
}

// Kill implements adminserver.Engine: the racks' engines run on one actor
// system, so an actor id names one actor of one engine.
func (a *rackAdmin) Kill(ctx context.Context, mode actors.KillMode, ids ...string) ([]actors.ActorInfo, error) {
	left := map[string]bool{}
	for _, id := range ids {
		left[id] = true
	}
	var killed []actors.ActorInfo
	for _, e := range a.current() {
		if len(left) == 0 {
			break
		}
		l, err := e.Actors(ctx)
		if errors.Is(err, messages.ErrEngineClosed) {
			continue
		}
		if err != nil {
			return killed, err
		}
		var mine []string
		for _, info := range l.Actors {
			if left[info.ID] {
				mine = append(mine, info.ID)
				delete(left, info.ID)
			}
		}
		if len(mine) == 0 {
			continue
		}
		k, err := e.Kill(ctx, mode, mine...)
		killed = append(killed, k...)
		if err != nil && !errors.Is(err, actors.ErrUnknownActor) {
			return killed, err
		}
	}
	if len(left) > 0 {
		var unknown []string
		for _, id := range ids {
			if left[id] {
				unknown = append(unknown, id)
			}
		}
		return killed, fmt.Errorf("kill %s: %w", strings.Join(unknown, ", "), actors.ErrUnknownActor)
	}
	return killed, nil
}

// ReleaseQuarantined implements adminserver.Engine.
func (a *rackAdmin) ReleaseQuarantined(ctx context.Context, jobID string) (actors.QuarantinedJob, error) {
	for _, e := range a.current() {
		q, err := e.ReleaseQuarantined(ctx, jobID)
		if errors.Is(err, messages.ErrJobNotFound) || errors.Is(err, messages.ErrEngineClosed) {
			continue
		}
		return q, err
	}
	return actors.QuarantinedJob{}, fmt.Errorf("release quarantined job %s on this member: %w", jobID, messages.ErrJobNotFound)
}

// CancelWith implements adminserver.Engine.
func (a *rackAdmin) CancelWith(ctx context.Context, id string, cause error) (messages.CancelJobReply, error) {
	for _, e := range a.current() {
		r, err := e.CancelWith(ctx, id, cause)
		if errors.Is(err, messages.ErrJobNotFound) || errors.Is(err, messages.ErrEngineClosed) {
			continue
		}
		return r, err
	}
	return messages.CancelJobReply{}, fmt.Errorf("cancel job %s on this member: %w", id, messages.ErrJobNotFound)
}
