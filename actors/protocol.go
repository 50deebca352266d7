package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// Internal protocol between the engine's actors. None of it is public: the
// facade speaks the messages package to the registry, everything else stays
// inside this package.

// handle → job actor
type (
	workerProgress struct{ description string }
	workerFinished struct{ outcome messages.Outcome }
)

// job actor ↔ registry
type (
	jobProgress struct {
		id          string
		description string
	}
	jobFinished struct {
		id      string
		outcome messages.Outcome
	}
	finishAck struct{}
	// cancelWork stops a job's workflow: soft (shutdown begins) cancels the
	// context the workflow got but not ShieldFromShutdown's; hard cancels
	// both, with cause.
	cancelWork struct {
		soft  bool
		cause error
		// named puts the cause in the job's failure message, should the
		// workflow not say it (a cancel by request, not a shutdown).
		named bool
	}
	// resync asks an actor to resend whatever the registry may have lost
	// while it was restarting: a job's pending terminal report or last
	// progress, a batch parent's verdict.
	resync struct{ registry *actor.PID }
)

// node lock → registry
type (
	// lockHolderGone reports that the actor a lease's holder lives in has
	// ended.
	lockHolderGone struct {
		key    lockKey
		holder string
	}
	// leaseExpired reports that an operation's lease outlived its TTL.
	leaseExpired struct {
		key    lockKey
		holder string
	}
)

// batch parent ↔ registry
type (
	// childFinished gives the batch actor one terminal child.
	childFinished struct {
		index int
		snap  messages.JobSnapshot
	}
	// settleBatch tells the batch actor that every child is terminal or
	// gone, with the registry's counts.
	settleBatch   struct{ counts childCounts }
	parentSettled struct {
		id      string
		outcome messages.Outcome
	}
)

// facade → registry
type (
	// awaitCheck asks whether a waiter's subscription is known; the answer
	// carries the registry's generation.
	awaitCheck      struct{ waiterID string }
	awaitCheckReply struct {
		known      bool
		generation uint64
	}
	// cancelAwait drops a waiter's subscription (the caller gave up).
	cancelAwait struct{ waiterID string }
	// interruptJobs seals every non-terminal job Failed as interrupted by
	// shutdown and stops its workflow (the drain window has ended).
	interruptJobs      struct{}
	interruptJobsReply struct{ jobs []messages.JobSnapshot }
	// stopActors makes the registry stop every job, lock and batch actor it
	// knows and answer with their PIDs (engine Close).
	stopActors      struct{}
	stopActorsReply struct{ pids []*actor.PID }
	// listActors asks the registry for the actors it supervises.
	listActors      struct{}
	listActorsReply struct {
		actors      []ActorInfo
		heldNodes   int
		waiters     int
		generation  uint64
		quarantined []QuarantinedJob
	}
)

// registry internal
type (
	// checkAbandoned is sent by the registry to itself after a job actor
	// terminated, so that the job's final report (already queued in the
	// user mailbox) is processed before the fallback seal is considered.
	checkAbandoned struct{ id string }
	reapTick       struct{}
)

// crashActor makes any engine actor panic: the admin service's chaos tool
// sends it to test supervision. Nothing else does.
type crashActor struct{}

func (crashActor) crash() { panic("chaos: crash requested") }

// crashable is implemented by messages that make an engine actor panic.
type crashable interface{ crash() }

func crashIfAsked(msg any) {
	if c, ok := msg.(crashable); ok {
		c.crash()
	}
}
