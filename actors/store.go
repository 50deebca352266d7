package actors

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// lockKey names what a lease holds: one node of a rack, exactly as the
// caller spelled it, or (node == "") the rack itself.
type lockKey struct{ rack, node string }

// lease is one granted, exclusive hold. Its facts (holder, since, expiry)
// are fixed when it is granted; the NodeLock actor serving it is handed
// the same immutable grant and watches the holder for the registry.
type lease struct {
	key       lockKey
	holder    string // job id, or the id of an operation's lease
	operation string // what an operation lease is for; "" for jobs
	since     time.Time
	expires   time.Time  // operations only
	devices   []string   // canonical device keys held with the node
	lock      *actor.PID // the NodeLock actor; nil until spawned
}

func (l *lease) isJob() bool { return l.operation == "" }

// childCounts tally a parent's children by state. The registry keeps them
// current as children change (O(1) per change), so a parent is never
// re-aggregated from its children.
type childCounts struct {
	queued, running, completed, failed, missing int
}

func (c *childCounts) add(s messages.JobState, n int) {
	switch s {
	case messages.StateQueued:
		c.queued += n
	case messages.StateRunning:
		c.running += n
	case messages.StateCompleted:
		c.completed += n
	case messages.StateFailed:
		c.failed += n
	}
}

func (c childCounts) done() int { return c.completed + c.failed + c.missing }

// total counts every child ever attached (a missing one included).
func (c childCounts) total() int { return c.queued + c.running + c.done() }

// record is one job in the index: its snapshot plus runtime links.
type record struct {
	snap messages.JobSnapshot

	// Index facts, maintained by apply.
	reservation bool        // a child that only holds its node for its parent
	index       int         // position among its parent's children
	holds       []lockKey   // leases this job holds
	counts      childCounts // of its children that are not reservations
	// seq is the journal sequence of the last event about the job: a
	// reply showing it waits until the journal holds it.
	seq uint64

	// Runtime links, rebuilt (not replayed) after a registry restart.
	leaf     bool                      // has a workflow (a job actor)
	worker   *actor.PID                // job actor while alive
	batch    *actor.PID                // batch-parent actor while alive
	wf       messages.Workflow         // not yet started (between admission and spawn)
	cleanup  *messages.CleanupPlan     // run after the worker exits
	rejected []messages.RejectedTarget // batch refusals, for idempotent replies
	ret      returnWatch               // a cancelled workflow's return (quarantine.go)
	kind     messages.JobType          // counted in flight under (capacity.go)
}

// isBatch reports whether the record aggregates its children: a typed job
// with children that are not reservations.
func (r *record) isBatch() bool {
	return r.counts.total() > 0 && r.snap.Type != messages.TypeNone
}

// opLease is an operation's lease: the keys it holds.
type opLease struct {
	keys    []lockKey
	expires time.Time
	refused []*messages.RefusedError // the reply, for retried requests
	err     error
}

// jobStore is the registry's state. It outlives any one registry actor
// instance: the engine injects the same store into every instance it
// produces, so a restarted or respawned registry finds every job and lease
// where the previous instance left them.
//
// Only the registry actor touches a store; protoactor's mailbox gives the
// happens-before edges between consecutive instances.
type jobStore struct {
	jobs   map[string]*record
	leases map[lockKey]*lease
	ops    map[string]*opLease // operation leases by id
	// devices maps each held device key to the node key holding it, and
	// rackNodes counts the held node keys of each rack (the power domain's
	// check); both follow leases in lock and release.
	devices      map[string]lockKey
	rackNodes    map[string]int
	openParents  map[string]struct{} // non-terminal batch parents
	shuttingDown bool
	closing      bool // engine Close: dead actors are not replaced
	// replayed is set when the index was rebuilt from the journal: the
	// registry's first turn interrupts the jobs that were not terminal.
	replayed bool

	// generation counts registry instances over this store: it grows on
	// every (re)start, so a waiting caller can tell a restart from a delay.
	generation uint64
	// poisoned remembers requests that crashed the registry, so a retry is
	// answered with an error instead of crashing it again.
	poisoned poisonRing
	// halfTurn is set when the registry panicked in a turn: the turn may
	// have applied events without their consequences, which the next
	// registry instance reconciles before anything else.
	halfTurn bool
	// unwritten holds the durable events of the registry's current turn:
	// they go to the journal writer together when the turn ends, so one
	// admission is one write however many jobs it creates.
	unwritten []messages.Event

	// Runtime links: watched PIDs by id, and pending AwaitTerminal
	// subscriptions (the waiting callers outlive a registry restart).
	pids     map[string]*actor.PID
	pidRefs  map[string]pidRef
	waiters  map[string][]*awaiter // by job id
	awaiters map[string]*awaiter   // by waiter id
	// cancelled names the jobs whose workflow was cancelled and has not
	// returned yet (quarantine.go).
	cancelled map[string]struct{}
	// quarantinedJobs counts the records of cancelled whose job is
	// quarantined (quarantine.go).
	quarantinedJobs int

	// terminal and inFlight split the index for capacity (capacity.go).
	terminal terminalQueue
	inFlight map[messages.JobType]int
	// reservationsInFlight counts the reservation children among inFlight.
	reservationsInFlight int
}

func newJobStore() *jobStore {
	return &jobStore{
		jobs:        make(map[string]*record),
		leases:      make(map[lockKey]*lease),
		ops:         make(map[string]*opLease),
		devices:     make(map[string]lockKey),
		rackNodes:   make(map[string]int),
		openParents: make(map[string]struct{}),
		inFlight:    make(map[messages.JobType]int),
		pids:        make(map[string]*actor.PID),
		pidRefs:     make(map[string]pidRef),
		waiters:     make(map[string][]*awaiter),
		awaiters:    make(map[string]*awaiter),
		cancelled:   make(map[string]struct{}),
	}
}

// snapshot returns the job as callers see it. ChildIDs shares the
// registry's append-only list (capped, so an append by either side never
// writes into the other's view). An open batch parent's description is
// derived from its counts, without changing the record.
func (s *jobStore) snapshot(r *record) messages.JobSnapshot {
	snap := r.snap
	n := len(snap.ChildIDs)
	snap.ChildIDs = snap.ChildIDs[:n:n]
	if r.isBatch() && !snap.State.IsTerminal() {
		snap.Description = progressDescription(snap.Type, r.counts)
	}
	if r.ret.quarantined {
		snap.Quarantined = true
		snap.Description += quarantineNote
	}
	return snap
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
