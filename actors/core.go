package actors

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/feed"
	"github.com/rmsd/rmsd/messages"
)

// core is what every engine actor shares: settings, the logger, the
// supervision strategy for never-restarted actors and the worker group.
type core struct {
	maxJobs int
	ttl     time.Duration
	now     func() time.Time
	log     zerolog.Logger

	// noRestart supervises job, lock and batch actors: a panic stops the
	// actor, it is never restarted (hardware side effects are not
	// idempotent). One value per engine, so protoactor keeps one guardian.
	noRestart actor.SupervisorStrategy
	// dispatcher runs every engine actor's mailbox turns.
	dispatcher *dispatcher
	// spawner is the root context (with the noRestart guardian) that spawns
	// job, lock and batch actors.
	spawner *actor.RootContext

	// workers counts running worker goroutines (workflow + cleanup). The
	// registry adds before it spawns a job actor; the goroutine marks done.
	workers sync.WaitGroup
	// workflows names the jobs whose workflow has not returned: their holds
	// stay until it does, and a shutdown that gives up on them says which.
	workflows workflowSet
	// quarantineAfter is how long a workflow may take to return once it is
	// cancelled before its job is marked quarantined.
	quarantineAfter time.Duration
	// askTimeout bounds one attempt of a worker to reach the registry.
	askTimeout time.Duration
	// stopCtx ends when Engine.Close begins; waits that must not outlive
	// the engine derive from it.
	stopCtx  context.Context
	stopWork context.CancelFunc

	// registry is the current registry PID, published by the keeper once
	// the registry's spawn has completed. Only the facade reads it; actors
	// learn the registry PID from the registry itself (spawn or resync).
	registry atomic.Pointer[actor.PID]
	// regDepth counts the current registry mailbox's backlog.
	regDepth atomic.Pointer[mailboxDepth]

	// journal writes the durable events; nil keeps the index in memory only.
	journal *journalWriter

	onCleanup func(messages.CleanupReport)
	onJob     func(messages.JobObservation)
	// interrupted is the message of a job replay finds unfinished
	// (Options.Interrupted).
	interrupted func(stage string) string
	// abandoned is set once the engine is abandoned (Engine.Abandon).
	abandoned atomic.Pointer[abandonment]
	// feed hands every applied change to the subscribers (feed.go).
	feed feed.Feed[messages.JobChange]
	// trackedJobs and heldNodes are the registry's index sizes after its
	// last turn (Engine.Load).
	trackedJobs atomic.Int64
	heldNodes   atomic.Int64
	// inFlightJobs is the number of jobs not terminal, reservation
	// children aside, after the registry's last turn (Engine.InFlight).
	inFlightJobs atomic.Int64
	// quarantinedJobs is the number of quarantined jobs after the
	// registry's last turn (QuarantinedJobs).
	quarantinedJobs atomic.Int64
	removeDir       func(path string) error // os.RemoveAll; replaced in tests
	// awaitTerminal lets a cleanup goroutine wait for other jobs.
	awaitTerminal func(ids []string, timeout time.Duration) bool
	// midSeal, set by tests only, runs in the middle of a seal: after the
	// terminal events are applied, before their consequences (crash.go).
	midSeal func(jobID string)
}

func stopDecider(any) actor.Directive { return actor.StopDirective }
