package actors

import (
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// nodeKey identifies a node exactly as the client named it.
type nodeKey struct{ rack, node string }

// record is one job in the index: its snapshot plus runtime links.
type record struct {
	snap messages.JobSnapshot

	// Runtime links, rebuilt (not replayed) after a registry restart.
	leaf     bool                      // has a workflow (a job actor)
	worker   *actor.PID                // job actor while alive
	batch    *actor.PID                // batch-parent actor while alive
	wf       messages.Workflow         // not yet started (between admission and spawn)
	cleanup  *messages.CleanupPlan     // run after the worker exits
	rejected []messages.RejectedTarget // batch refusals, for idempotent replies
}

// jobStore is the registry's state. It outlives any one registry actor
// instance: the engine injects the same store into every instance it
// produces, so a restarted or respawned registry finds every job and node
// lock where the previous instance left them.
//
// Only the registry actor touches a store; protoactor's mailbox gives the
// happens-before edges between consecutive instances.
type jobStore struct {
	jobs        map[string]*record
	byNode      map[nodeKey][]string // non-terminal jobs per node, oldest first
	openParents map[string]struct{}  // non-terminal jobs with children
	locks       map[nodeKey]*actor.PID
	// pendingLocks names, per node, the job whose actor was asked to spawn
	// the node's lock actor and has not yet reported it (lockSpawned).
	pendingLocks map[nodeKey]string
	shuttingDown bool
	closing      bool // engine Close: dead actors are not replaced

	// Runtime links: watched PIDs by id, and pending AwaitTerminal requests
	// keyed by job id (the waiting futures outlive a registry restart).
	pids    map[string]*actor.PID
	pidRefs map[string]pidRef
	waiters map[string][]*awaiter
}

func newJobStore() *jobStore {
	return &jobStore{
		jobs:         make(map[string]*record),
		byNode:       make(map[nodeKey][]string),
		openParents:  make(map[string]struct{}),
		locks:        make(map[nodeKey]*actor.PID),
		pendingLocks: make(map[nodeKey]string),
		pids:         make(map[string]*actor.PID),
		pidRefs:      make(map[string]pidRef),
		waiters:      make(map[string][]*awaiter),
	}
}

// busy returns the oldest non-terminal job on a node, if any.
func (s *jobStore) busy(k nodeKey) (string, bool) {
	ids := s.byNode[k]
	if len(ids) == 0 {
		return "", false
	}
	return ids[0], true
}

// snapshot returns a deep copy of a job.
func (r *record) snapshot() messages.JobSnapshot {
	s := r.snap
	s.ChildIDs = slices.Clone(r.snap.ChildIDs)
	return s
}

// expired reports whether a terminal record's TTL has elapsed at now. A
// clock that moved backwards never expires anything.
func (r *record) expired(now time.Time, ttl time.Duration) bool {
	if !r.snap.State.IsTerminal() {
		return false
	}
	age := now.Sub(r.snap.UpdatedAt)
	return age >= 0 && age >= ttl
}
