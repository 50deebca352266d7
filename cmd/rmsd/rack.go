package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/forward"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/member"
	"github.com/rmsd/rmsd/member/rackjournal"
	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/sitejobs"
	"github.com/rmsd/rmsd/store"
)

// In cluster mode every rack runs its jobs on the member that owns it:
// the rack's grain (package member) opens a rackService when it takes the
// rack's lease, and answers the calls other members forward to the rack
// with it. Each rack has a job engine of its own, so that exclusion and
// power-domain decisions for the rack's nodes stay with one registry, and
// a rack can be handed over or abandoned without touching the others.
//
// The engines run on one actor system of the member's, apart from the
// cluster's: protoactor's cluster shuts its actor system down when the
// member leaves, and a draining member's jobs must outlive its leaving the
// membership by the moment the hand-over takes.

// rackOpener builds the racks' services of one member: every rack shares
// the daemon's dependencies (node registry, hardware clients, catalog) but
// has its own job engine.
type rackOpener struct {
	cfg    *config.Config
	logger logging.Logger
	sys    *actor.ActorSystem
	st     store.RackOwners
	nodes  *nodeStore
	deps   rmsserver.Deps
	member string
	onJob  func(messages.JobObservation)
	commit func(time.Duration, error)
	// admin, when the admin service is on, is told of every rack engine
	// opened and closed.
	admin *rackAdmin
}

// open implements member.OpenRack: it reloads the rack's nodes from the
// store, starts the rack's engine (its replay seals the previous owner's
// unfinished jobs before it returns) and the rack's handlers.
func (o *rackOpener) open(ctx context.Context, rackID string, lease func() (store.RackLease, bool), previous string) (member.RackService, error) {
	log := o.logger.Component("jobs").With().Str("rack_id", rackID).Logger()
	if err := o.nodes.reloadRack(ctx, rackID); err != nil {
		return nil, err
	}
	w := o.cfg.Workflows
	e, err := actors.New(o.sys, actors.Options{
		MaxTrackedJobs:  w.MaxTrackedJobs,
		TerminalJobTTL:  time.Duration(w.TerminalJobTTLSeconds) * time.Second,
		QuarantineAfter: time.Duration(w.QuarantineAfterSeconds) * time.Second,
		Logger:          log,
		OnJob:           o.onJob,
		OnCommit:        o.commit,
		Journal:         rackJournal(o.st, rackID, lease),
		StoreTimeout:    time.Duration(o.cfg.Storage.TimeoutSeconds) * time.Second,
		Interrupted:     interruptedBy(previous),
	})
	if err != nil {
		return nil, fmt.Errorf("rack %s: start its job engine: %w", rackID, err)
	}
	s := &rackService{rackID: rackID, member: o.member, engine: e, log: log, admin: o.admin, reads: sitejobs.OpenRack(e)}
	if o.admin != nil {
		o.admin.add(rackID, e)
	}
	s.jobs = &rackJobs{JobEngine: e, s: s}
	deps := o.deps
	deps.Jobs = s.jobs
	s.handlers = rmsserver.NewHandlers(deps, o.logger.Component("grpc").With().Str("rack_id", rackID).Logger())
	return s, nil
}

// rackJournal is the journal of one rack's jobs: the rack's stream of the
// shared journal, every write fenced by the rack's lease.
func rackJournal(st store.RackOwners, rackID string, lease func() (store.RackLease, bool)) store.Journal {
	return rackjournal.New(st, rackID, lease)
}

// interruptedBy is the message a new owner's replay gives the previous
// owner's unfinished jobs (upstream's wording for a lost process); nil,
// the engine's own restart message, when the rack had no owner.
func interruptedBy(previous string) func(stage string) string {
	if previous == "" {
		return nil
	}
	return func(stage string) string {
		return fmt.Sprintf("interrupted: member %s left the cluster at stage %q; the state of the hardware is unknown", previous, stage)
	}
}

// rackService is one rack's engine and handlers on the member that owns
// the rack (member.RackService).
type rackService struct {
	rackID, member string
	engine         *actors.Engine
	jobs           *rackJobs
	handlers       *rmsserver.Handlers
	log            zerolog.Logger
	admin          *rackAdmin
	// reads answers other members' consoles (rackjobs.go).
	reads *sitejobs.Rack
	// draining refuses new jobs; stopped is set once the engine was closed
	// or abandoned.
	draining atomic.Bool
	stopOnce sync.Once
}

// Serve implements member.RackService.
func (s *rackService) Serve(ctx context.Context, fwd *rackpb.Forward) *rackpb.ForwardReply {
	return forward.Serve(ctx, s.handlers, fwd, s.log)
}

// InFlight implements member.RackService.
func (s *rackService) InFlight() int { return s.engine.InFlight() }

// BeginDrain implements member.RackService.
func (s *rackService) BeginDrain() { s.draining.Store(true) }

// Close implements member.RackService: running jobs are cancelled and
// awaited until ctx ends, then sealed interrupted.
func (s *rackService) Close(ctx context.Context) error {
	var err error
	s.stopOnce.Do(func() {
		s.draining.Store(true)
		var n int
		n, err = s.engine.Drain(ctx)
		s.forget()
		if err != nil {
			err = fmt.Errorf("rack %s: drain %d jobs: %w", s.rackID, n, err)
		}
	})
	return err
}

// Abandon implements member.RackService: the member no longer holds the
// rack's lease, so the engine stops its workflows and writes nothing more;
// the rack's next owner seals its jobs.
func (s *rackService) Abandon(cause error) {
	s.stopOnce.Do(func() {
		s.draining.Store(true)
		s.log.Error().Err(cause).Msg("rack abandoned: its workflows are stopped and nothing more is written for it")
		s.engine.Abandon(cause)
		s.forget()
	})
}

// forget takes the rack's engine out of the admin service's view.
func (s *rackService) forget() {
	if s.admin != nil {
		s.admin.remove(s.rackID, s.engine)
	}
}

// rackJobs is the rack's engine as its handlers see it: admission is
// refused while the rack drains.
type rackJobs struct {
	rmsserver.JobEngine
	s *rackService
}

// refuse answers an admission while the rack drains.
func (j *rackJobs) refuse() error {
	if !j.s.draining.Load() {
		return nil
	}
	return fmt.Errorf("rack %s is being handed over by member %s: %w", j.s.rackID, j.s.member, messages.ErrEngineClosed)
}

// Create implements rmsserver.JobEngine.
func (j *rackJobs) Create(ctx context.Context, spec messages.JobSpec, wf messages.Workflow, cleanup *messages.CleanupPlan) (messages.JobSnapshot, error) {
	if err := j.refuse(); err != nil {
		return messages.JobSnapshot{}, err
	}
	return j.JobEngine.Create(ctx, spec, wf, cleanup)
}

// CreateBatch implements rmsserver.JobEngine.
func (j *rackJobs) CreateBatch(ctx context.Context, parent messages.JobSpec, targets []messages.BatchTarget, cleanup *messages.CleanupPlan) (messages.CreateBatchReply, error) {
	if err := j.refuse(); err != nil {
		return messages.CreateBatchReply{}, err
	}
	return j.JobEngine.CreateBatch(ctx, parent, targets, cleanup)
}

// CreateReserved implements rmsserver.JobEngine.
func (j *rackJobs) CreateReserved(ctx context.Context, spec messages.JobSpec, wf messages.Workflow, res *messages.Reservation) (messages.CreateJobReply, error) {
	if err := j.refuse(); err != nil {
		return messages.CreateJobReply{}, err
	}
	return j.JobEngine.CreateReserved(ctx, spec, wf, res)
}
