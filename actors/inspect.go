package actors

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
)

// ActorInfo describes one actor of the engine, for operators and chaos
// tools.
type ActorInfo struct {
	// ID is the actor's process id, what Kill takes.
	ID string
	// Kind is "registry", "job", "lock" or "batch".
	Kind string
	// JobID is the job a job or batch actor runs, or the job holding a
	// lock; for an operation's lease it is the lease id.
	JobID  string
	RackID string
	// NodeID is the node of a job or lock ("" for a rack lease).
	NodeID string
}

// Listing is what Actors returns.
type Listing struct {
	Actors []ActorInfo
	// HeldNodes counts the nodes and racks under a lease.
	HeldNodes int
	// Waiters counts the callers subscribed to the end of jobs.
	Waiters int
	// Generation counts registry instances since the engine started.
	Generation uint64
	// Quarantined lists the jobs whose workflow has not returned within
	// the quarantine bound after it was cancelled, by job id.
	Quarantined []QuarantinedJob
}

// KillMode says how Kill ends an actor.
type KillMode int

// Kill modes.
const (
	KillStop   KillMode = iota + 1 // stop at once (system message)
	KillPoison                     // stop after the messages already queued
	KillCrash                      // make it panic
)

// ErrUnknownActor refuses to kill an actor the engine does not supervise.
var ErrUnknownActor = fmt.Errorf("jobs: not an actor of the job engine")

func (r *registry) listActors(ctx actor.Context) *listActorsReply {
	s := r.store
	out := &listActorsReply{heldNodes: len(s.leases), waiters: len(s.awaiters), generation: s.generation,
		quarantined: r.quarantined()}
	out.actors = append(out.actors, ActorInfo{ID: ctx.Self().Id, Kind: "registry"})
	for id, ref := range s.pidRefs {
		info := ActorInfo{ID: id, Kind: ref.kind.String(), JobID: ref.job}
		switch ref.kind {
		case kindLock:
			info.RackID, info.NodeID = ref.key.rack, ref.key.node
		default:
			if rec, ok := s.jobs[ref.job]; ok {
				info.RackID, info.NodeID = rec.snap.RackID, rec.snap.NodeID
			}
		}
		out.actors = append(out.actors, info)
	}
	slices.SortFunc(out.actors[1:], func(a, b ActorInfo) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Actors lists the registry and every job, lock and batch actor it
// supervises.
func (e *Engine) Actors(ctx context.Context) (Listing, error) {
	res, err := e.ask(ctx, &listActors{})
	if err != nil {
		return Listing{}, fmt.Errorf("list engine actors: %w", err)
	}
	l := res.(*listActorsReply)
	return Listing{Actors: l.actors, HeldNodes: l.heldNodes, Waiters: l.waiters, Generation: l.generation,
		Quarantined: l.quarantined}, nil
}

// Kill ends actors of the engine, as a chaos test would: the supervision
// rules then apply (the registry restarts or is respawned with its state; a
// job whose actor dies is sealed Failed and frees its nodes once its
// workflow has returned; lock and batch actors are respawned). Only actors of the engine are killed: it returns
// the ones it killed and, when some ids name no actor of the engine (any
// more), an error wrapping ErrUnknownActor that lists them.
func (e *Engine) Kill(ctx context.Context, mode KillMode, ids ...string) ([]ActorInfo, error) {
	var send func(*actor.PID)
	switch mode {
	case KillStop:
		send = e.sys.Root.Stop
	case KillPoison:
		send = e.sys.Root.Poison
	case KillCrash:
		send = func(pid *actor.PID) { e.sys.Root.Send(pid, crashActor{}) }
	default:
		return nil, fmt.Errorf("kill: unknown mode %d", mode)
	}
	l, err := e.Actors(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]ActorInfo, len(l.Actors))
	for _, a := range l.Actors {
		byID[a.ID] = a
	}
	var killed []ActorInfo
	var unknown []string
	for _, id := range ids {
		a, ok := byID[id]
		if !ok {
			unknown = append(unknown, id)
			continue
		}
		send(actor.NewPID(e.sys.Address(), id))
		killed = append(killed, a)
	}
	if len(unknown) > 0 {
		return killed, fmt.Errorf("kill %s: %w", strings.Join(unknown, ", "), ErrUnknownActor)
	}
	return killed, nil
}
