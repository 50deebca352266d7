package main

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/actors/actorsystem"
	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/adminserver"
	"github.com/rmsd/rmsd/grpc/opsserver"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// jobEngine is the daemon's view of the job engine.
type jobEngine interface {
	// Jobs is what the RPCs ask of the job engine.
	Jobs() rmsserver.JobEngine
	// Admin is what the admin service asks of it.
	Admin() adminserver.Engine
	// Listing is what the read service's job listing asks of it.
	Listing() opsserver.Jobs
	// BeginShutdown refuses new jobs from now on.
	BeginShutdown()
	// Drain cancels running jobs, waits for them until ctx ends and stops
	// the engine.
	Drain(ctx context.Context) error
	// Load returns the job records kept and the nodes held, without
	// waiting for the registry (the metrics read it).
	Load() (tracked, held int)
	// RegistryMailboxDepth returns the job registry's mailbox backlog.
	RegistryMailboxDepth() int
	// QuarantinedJobs returns the jobs quarantined now, without waiting
	// for the registry.
	QuarantinedJobs() int
	// Engine is the job engine itself, for the console's reads and its
	// change feed.
	Engine() *actors.Engine
}

// beginShutdownTimeout bounds the registry round trip of BeginShutdown.
const beginShutdownTimeout = 10 * time.Second

// actorEngine is the protoactor job engine in its own actor system.
type actorEngine struct {
	sys    *actor.ActorSystem
	engine *actors.Engine
	log    zerolog.Logger
}

// startEngine starts the job engine configured by [workflows], with
// protoactor's own logs routed into the "protoactor" component logger.
// onJob, when set, is told of every job admitted and sealed, and onCommit
// of every journal commit (the metrics).
// journal, when set, makes the jobs durable: the engine replays it at start
// (interrupting what was running) and appends every change to it.
func startEngine(cfg *config.Config, logger logging.Logger, onJob func(messages.JobObservation), onCommit func(time.Duration, error),
	journal store.Journal) (jobEngine, error) {
	w := cfg.Workflows
	log := logger.Component("jobs")
	sys := actorsystem.New(logger.ActorSystemOption())
	e, err := actors.New(sys, actors.Options{
		MaxTrackedJobs:  w.MaxTrackedJobs,
		TerminalJobTTL:  time.Duration(w.TerminalJobTTLSeconds) * time.Second,
		QuarantineAfter: time.Duration(w.QuarantineAfterSeconds) * time.Second,
		Logger:          log,
		OnJob:           onJob,
		OnCommit:        onCommit,
		Journal:         journal,
		StoreTimeout:    time.Duration(cfg.Storage.TimeoutSeconds) * time.Second,
	})
	if err != nil {
		sys.Shutdown()
		return nil, fmt.Errorf("start job engine: %w", err)
	}
	return &actorEngine{sys: sys, engine: e, log: log}, nil
}

// Jobs implements jobEngine.
func (a *actorEngine) Jobs() rmsserver.JobEngine { return a.engine }

// Admin implements jobEngine.
func (a *actorEngine) Admin() adminserver.Engine { return a.engine }

// Listing implements jobEngine.
func (a *actorEngine) Listing() opsserver.Jobs { return a.engine }

// Engine implements jobEngine.
func (a *actorEngine) Engine() *actors.Engine { return a.engine }

// Load implements jobEngine.
func (a *actorEngine) Load() (tracked, held int) { return a.engine.Load() }

// RegistryMailboxDepth implements jobEngine.
func (a *actorEngine) RegistryMailboxDepth() int { return a.engine.RegistryMailboxDepth() }

// QuarantinedJobs implements jobEngine.
func (a *actorEngine) QuarantinedJobs() int { return a.engine.QuarantinedJobs() }

// BeginShutdown implements jobEngine.
func (a *actorEngine) BeginShutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), beginShutdownTimeout)
	defer cancel()
	ids, err := a.engine.BeginShutdown(ctx)
	if err != nil {
		a.log.Error().Err(err).Msg("begin job engine shutdown")
		return
	}
	a.log.Info().Int("jobs_signalled", len(ids)).Msg("job engine refuses new jobs")
}

// Drain implements jobEngine.
func (a *actorEngine) Drain(ctx context.Context) error {
	n, err := a.engine.Drain(ctx)
	a.sys.Shutdown()
	a.log.Info().Int("jobs_signalled", n).Msg("job engine stopped")
	if err != nil {
		return fmt.Errorf("drain %d jobs: %w", n, err)
	}
	return nil
}
