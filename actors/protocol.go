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
	finishAck  struct{}
	cancelWork struct{}
	// resync asks a job actor to resend whatever the registry may have lost
	// while it was restarting: the pending terminal report or the last
	// progress description.
	resync struct{ registry *actor.PID }
)

// node lock ↔ registry
type (
	lockAcquire struct {
		jobID string
		pid   *actor.PID
	}
	lockRelease    struct{ jobID string }
	lockHolderGone struct{ jobID string }
	// lockSpawned is a job actor reporting the lock actor it spawned for
	// its node (the registry asked it to, to keep spawns off its mailbox).
	lockSpawned struct {
		key   nodeKey
		pid   *actor.PID
		jobID string
	}
)

// batch parent ↔ registry
type (
	childAdded    struct{ id string }
	childFinished struct{ snap messages.JobSnapshot }
	parentSettled struct {
		id      string
		outcome messages.Outcome
	}
)

// registry internal
type (
	// checkAbandoned is sent by the registry to itself after a job actor
	// terminated, so that the job's final report (already queued in the
	// user mailbox) is processed before the fallback seal is considered.
	checkAbandoned struct{ id string }
	reapTick       struct{}
	// stopActors makes the registry stop every job, lock and batch actor it
	// knows and answer with their PIDs (engine Close).
	stopActors      struct{}
	stopActorsReply struct{ pids []*actor.PID }
	// listActors asks the registry for the PIDs it watches, by kind
	// (diagnostics and chaos tests).
	listActors      struct{}
	listActorsReply struct {
		jobs, locks, batches []*actor.PID
		lockedNodes          int
	}
)

// crashable is implemented by test messages that make an engine actor panic
// (chaos tests). Production code never sends one.
type crashable interface{ crashActor() }

func crashIfAsked(msg any) {
	if c, ok := msg.(crashable); ok {
		c.crashActor()
	}
}
