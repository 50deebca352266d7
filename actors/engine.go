package actors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// Workflow is the work a job runs; the hardware packages implement it.
type Workflow = messages.Workflow

// Defaults for Options.
const (
	DefaultMaxTrackedJobs = 10000
	DefaultTerminalJobTTL = 24 * time.Hour
	DefaultAskTimeout     = 2 * time.Second
	// DefaultStoreTimeout bounds one commit of the job journal: a store
	// that has not answered by then counts as failed (see StoreTimeout).
	DefaultStoreTimeout = 5 * time.Second
	// DefaultCloseTimeout bounds Close.
	DefaultCloseTimeout = 30 * time.Second
)

// Options configures an Engine. Zero values select the defaults.
type Options struct {
	// MaxTrackedJobs caps the number of job records. Only jobs in flight
	// are refused for it: at the cap, the oldest terminal records are
	// evicted to make room.
	MaxTrackedJobs int
	// TerminalJobTTL is how long a terminal job stays queryable.
	TerminalJobTTL time.Duration
	// AskTimeout bounds one attempt to reach the registry; the engine
	// retries until the caller's context ends, so callers only see a
	// timeout when the registry could not answer in their deadline.
	AskTimeout time.Duration
	// Now is the clock (time.Now by default).
	Now func() time.Time
	// ReaperTicks, when set, drives the reaper instead of the internal
	// ticker (every TerminalJobTTL clamped to 1 s–300 s).
	ReaperTicks <-chan time.Time
	// Logger receives the engine's logs; the zero value discards them.
	Logger zerolog.Logger
	// OnCleanup, when set, receives the report of every cleanup plan.
	OnCleanup func(messages.CleanupReport)
	// OnJob, when set, is told of every job (reservation children aside)
	// when it is admitted and when it is sealed. It runs on the registry's
	// turn, so it must be cheap and never block: count, don't wait.
	OnJob func(messages.JobObservation)
	// QuarantineAfter is how long a cancelled workflow may take to return
	// before its job is quarantined (DefaultQuarantineAfter when zero).
	QuarantineAfter time.Duration
	// StoreTimeout bounds one commit of the journal (DefaultStoreTimeout
	// when zero): past it the store counts as unavailable, the admissions
	// waiting for that commit are refused with messages.ErrStoreUnavailable
	// and their jobs never start. Keep it below the gRPC callers' deadlines.
	// Reads that wait for a commit wait at most a fifth of it, then answer
	// from memory.
	StoreTimeout time.Duration
	// Journal, when set, makes the index durable: New rebuilds it from the
	// journal (jobs that were not terminal come back Failed, interrupted by
	// the restart) and every later change is appended before a caller can
	// see it (see journal.go). Nil keeps jobs in memory only.
	Journal store.Journal
	// OnCommit, when set, is told of every attempt to commit the journal:
	// how long it took and its error (nil once it is durable). It runs on
	// the journal's writer goroutine between commits, so it must be cheap.
	OnCommit func(elapsed time.Duration, err error)
	// Interrupted, when set, gives the error message of a job that replay
	// finds unfinished, from the stage it was at (nil: interrupted by a
	// restart of rmsd). A cluster member replaying a rack it takes over
	// names the member that left.
	Interrupted func(stage string) string
}

// Engine is the job engine: a JobRegistry actor (under a keeper that
// restarts or respawns it), one Job actor per leaf, one NodeLock actor per
// locked node and one BatchParent actor per open batch. Its methods are the
// synchronous facade used by the gRPC edge; all are safe for concurrent use.
type Engine struct {
	sys        *actor.ActorSystem
	core       *core
	keeper     *actor.PID
	askTimeout time.Duration

	closed atomic.Bool
	// waitChecks counts Wait's subscription checks (tests observe it).
	waitChecks atomic.Int64
	closeOnce  sync.Once
	reaperStop chan struct{}
	reaperDone chan struct{}
}

// New starts an engine in sys. The caller owns sys; Close the engine before
// shutting sys down.
func New(sys *actor.ActorSystem, opts Options) (*Engine, error) {
	return newEngineWithStore(sys, opts, newJobStore())
}

// newEngineWithStore starts an engine over an existing store (benchmarks preload one).
func newEngineWithStore(sys *actor.ActorSystem, opts Options, store *jobStore) (*Engine, error) {
	// Job ids are random UUIDs; drawing their randomness from crypto/rand
	// in blocks rather than once per id makes admission cheaper.
	uuid.EnableRandPool()
	if opts.MaxTrackedJobs < 0 || opts.TerminalJobTTL < 0 || opts.AskTimeout < 0 || opts.QuarantineAfter < 0 || opts.StoreTimeout < 0 {
		return nil, fmt.Errorf("new job engine: negative limit: %w", messages.ErrInvalidSpec)
	}
	if opts.MaxTrackedJobs == 0 {
		opts.MaxTrackedJobs = DefaultMaxTrackedJobs
	}
	if opts.TerminalJobTTL == 0 {
		opts.TerminalJobTTL = DefaultTerminalJobTTL
	}
	if opts.AskTimeout == 0 {
		opts.AskTimeout = DefaultAskTimeout
	}
	if opts.StoreTimeout == 0 {
		opts.StoreTimeout = DefaultStoreTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.QuarantineAfter == 0 {
		opts.QuarantineAfter = DefaultQuarantineAfter
	}
	if opts.Interrupted == nil {
		opts.Interrupted = interruptedMessage
	}
	c := &core{
		quarantineAfter: opts.QuarantineAfter,
		askTimeout:      opts.AskTimeout,
		maxJobs:         opts.MaxTrackedJobs,
		ttl:             opts.TerminalJobTTL,
		now:             opts.Now,
		log:             opts.Logger,
		noRestart:       actor.NewOneForOneStrategy(0, 0, stopDecider),
		onCleanup:       opts.OnCleanup,
		onJob:           opts.OnJob,
		interrupted:     opts.Interrupted,
		removeDir:       os.RemoveAll,
		dispatcher:      newDispatcher(defaultWorkers()),
	}
	if opts.Journal != nil {
		st, err := replayJournal(opts.Journal, store)
		if err != nil {
			c.dispatcher.close()
			return nil, fmt.Errorf("new job engine: %w", err)
		}
		c.log.Info().Int("rows", st.rows).Int("events", st.events).Int("jobs", len(store.jobs)).Msg("job journal replayed")
		if st.skipped > 0 {
			c.log.Warn().Int("events", st.skipped).Msg("job journal events did not apply on replay and were skipped")
		}
		c.journal = newJournalWriter(opts.Journal, sys, c.log, st.events, opts.StoreTimeout, opts.OnCommit)
	}
	c.spawner = sys.Root.Copy().WithGuardian(c.noRestart)
	c.stopCtx, c.stopWork = context.WithCancel(context.Background())
	e := &Engine{sys: sys, core: c, askTimeout: opts.AskTimeout, reaperStop: make(chan struct{}), reaperDone: make(chan struct{})}
	c.awaitTerminal = e.awaitForCleanup
	regProps := actor.PropsFromProducer(func() actor.Actor { return &registry{store: store, core: c} },
		append(withHandlerMiddleware(), actor.WithDispatcher(c.dispatcher), actor.WithMailbox(c.countRegistryMailbox()))...)
	kp := &keeper{props: regProps, core: c, ready: make(chan struct{})}
	e.keeper = sys.Root.SpawnPrefix(actor.PropsFromProducer(func() actor.Actor { return kp },
		append(withHandlerMiddleware(), actor.WithSupervisor(registryRestarts()), actor.WithDispatcher(c.dispatcher))...), "jobs-")
	<-kp.ready
	ticks := opts.ReaperTicks
	var ticker *time.Ticker
	if ticks == nil {
		ticker = time.NewTicker(reaperInterval(opts.TerminalJobTTL))
		ticks = ticker.C
	}
	go e.runReaper(ticks, ticker)
	return e, nil
}

func (e *Engine) runReaper(ticks <-chan time.Time, ticker *time.Ticker) {
	defer close(e.reaperDone)
	if ticker != nil {
		defer ticker.Stop()
	}
	for {
		select {
		case <-e.reaperStop:
			return
		case <-ticks:
			e.sys.Root.Send(e.core.registry.Load(), &reapTick{})
		}
	}
}

// ask sends a command to the registry and returns its reply. A lost request
// (registry restarting) is retried with a short backoff until ctx ends;
// every command is idempotent. A request that crashed the registry is
// answered with ErrRegistryCrashed and not retried.
func (e *Engine) ask(ctx context.Context, msg any) (any, error) {
	backoff := 2 * time.Millisecond
	for {
		res, err := e.askOnce(ctx, msg)
		if err == nil || !errors.Is(err, errAskLost) {
			return res, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w: %w", messages.ErrRegistryNotReached, ctx.Err())
		case <-e.core.stopCtx.Done():
			t.Stop()
			return nil, e.closedErr()
		case <-t.C:
		}
		backoff = min(2*backoff, 100*time.Millisecond)
	}
}

// errAskLost marks one attempt whose answer never came (timeout, or the
// registry PID was gone): it may be retried.
var errAskLost = errors.New("jobs: registry answer lost")

// closedErr is why a closed engine serves no request: ErrEngineClosed,
// and for an abandoned one its refusal (ErrNotOwner), however the request
// found the engine closed (at once, or while retrying an answer the
// stopping registry never gave).
func (e *Engine) closedErr() error {
	if a := e.core.abandoned.Load(); a != nil {
		return fmt.Errorf("%w: %w", a.refusal, messages.ErrEngineClosed)
	}
	return messages.ErrEngineClosed
}

// askOnce makes one attempt of ask.
func (e *Engine) askOnce(ctx context.Context, msg any) (any, error) {
	if e.closed.Load() {
		return nil, e.closedErr()
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", messages.ErrRegistryNotReached, err)
	}
	timeout := e.askTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
		if timeout <= 0 {
			return nil, fmt.Errorf("%w: %w", messages.ErrRegistryNotReached, context.DeadlineExceeded)
		}
	}
	p := newReplyProcess(e.sys)
	defer p.close()
	e.sys.Root.RequestWithCustomSender(e.core.registry.Load(), msg, p.pid)
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case res := <-p.ch:
		switch r := res.(type) {
		case *requestFailed:
			return nil, r.err
		case *actor.DeadLetterResponse:
			return nil, fmt.Errorf("%w: %w", errAskLost, actor.ErrDeadLetter)
		default:
			return res, nil
		}
	case <-t.C:
		return nil, fmt.Errorf("%w: %w", errAskLost, actor.ErrTimeout)
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", messages.ErrRegistryNotReached, ctx.Err())
	}
}

// Create admits one job and starts wf in it. A refusal is a
// *messages.RefusedError (errors.Is with ErrNodeBusy, ErrAtCapacity, ...).
func (e *Engine) Create(ctx context.Context, spec messages.JobSpec, wf Workflow, cleanup *messages.CleanupPlan) (messages.JobSnapshot, error) {
	if spec.ID == "" {
		spec.ID = uuid.NewString() // fixed before the first attempt: retries are idempotent
	}
	res, err := e.ask(ctx, &messages.CreateJob{Spec: spec, Workflow: wf, Cleanup: cleanup})
	if err != nil {
		return messages.JobSnapshot{}, fmt.Errorf("create job: %w", err)
	}
	rep := res.(*messages.CreateJobReply)
	return rep.Job, rep.Err
}

// CreateReserved admits a job that also holds the rack and nodes of res,
// all or nothing, in one registry message, and starts wf. A refusal is a
// *messages.RefusedError; the reply's Conflicts then lists every busy node.
// Set spec.ID first to be able to cancel the job should the call fail
// without an answer.
func (e *Engine) CreateReserved(ctx context.Context, spec messages.JobSpec, wf Workflow, res *messages.Reservation) (messages.CreateJobReply, error) {
	if spec.ID == "" {
		spec.ID = uuid.NewString()
	}
	out, err := e.ask(ctx, &messages.CreateJob{Spec: spec, Workflow: wf, Reserve: res})
	if err != nil {
		return messages.CreateJobReply{}, fmt.Errorf("create job %s: %w", spec.ID, err)
	}
	rep := out.(*messages.CreateJobReply)
	return *rep, rep.Err
}

// CreateBatch admits a parent and one child per target in one registry
// request. Err is set only when the parent was refused. A cleanup plan
// runs once the parent is sealed (a parent whose every target was refused
// stays open until someone seals it, e.g. with Seal).
func (e *Engine) CreateBatch(ctx context.Context, parent messages.JobSpec, targets []messages.BatchTarget, cleanup *messages.CleanupPlan) (messages.CreateBatchReply, error) {
	if parent.ID == "" {
		parent.ID = uuid.NewString()
	}
	res, err := e.ask(ctx, &messages.CreateBatch{Parent: parent, Children: targets, Cleanup: cleanup})
	if err != nil {
		return messages.CreateBatchReply{}, fmt.Errorf("create batch: %w", err)
	}
	rep := res.(*messages.CreateBatchReply)
	return *rep, rep.Err
}

// Get returns a job, followed by its children in attach order when
// includeChildren is set. Unknown ids give messages.ErrJobNotFound.
func (e *Engine) Get(ctx context.Context, id string, includeChildren bool) ([]messages.JobSnapshot, error) {
	res, err := e.ask(ctx, &messages.GetJob{ID: id, IncludeChildren: includeChildren})
	if err != nil {
		return nil, fmt.Errorf("get job %s: %w", id, err)
	}
	rep := res.(*messages.GetJobReply)
	return rep.Jobs, rep.Err
}

// Seal records a terminal outcome for a job without a running workflow of
// its own, e.g. a batch parent that admitted no child.
func (e *Engine) Seal(ctx context.Context, id string, out messages.Outcome) (messages.JobSnapshot, error) {
	res, err := e.ask(ctx, &messages.SealJob{ID: id, Outcome: out})
	if err != nil {
		return messages.JobSnapshot{}, fmt.Errorf("seal job %s: %w", id, err)
	}
	rep := res.(*messages.SealJobReply)
	return rep.Job, rep.Err
}

// Cancel signals a job's workflow to stop, or a batch parent's every open
// child. The nodes stay locked until each workflow records its terminal
// state.
func (e *Engine) Cancel(ctx context.Context, id string) (bool, error) {
	rep, err := e.CancelWith(ctx, id, nil)
	return rep.Signalled, err
}

// CancelWith is Cancel with cause as the workflows' context cause (nil: a
// plain cancel). A job already ended answers Terminal, without error.
func (e *Engine) CancelWith(ctx context.Context, id string, cause error) (messages.CancelJobReply, error) {
	res, err := e.ask(ctx, &messages.CancelJob{ID: id, Cause: cause})
	if err != nil {
		return messages.CancelJobReply{}, fmt.Errorf("cancel job %s: %w", id, err)
	}
	rep := res.(*messages.CancelJobReply)
	return *rep, rep.Err
}

// Wait blocks until every listed job is terminal or gone, or ctx ends. It
// holds one subscription in the registry for its whole wait, removed when
// it returns; every AskTimeout it checks that the registry still knows the
// subscription (a request sent while the registry was being replaced is
// lost) and registers it again only then.
func (e *Engine) Wait(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if e.closed.Load() {
		return fmt.Errorf("wait for %d jobs: %w", len(ids), messages.ErrEngineClosed)
	}
	w := newReplyProcess(e.sys)
	defer w.close()
	msg := &messages.AwaitTerminal{WaiterID: w.id, IDs: ids}
	subscribe := func() { e.sys.Root.RequestWithCustomSender(e.core.registry.Load(), msg, w.pid) }
	subscribe()
	tick := time.NewTicker(e.askTimeout)
	defer tick.Stop()
	var retry <-chan time.Time // armed after a dead letter
	backoff := 2 * time.Millisecond
	for {
		select {
		case res := <-w.ch:
			rep, ok := res.(*messages.AwaitTerminalReply)
			if !ok { // a dead letter: the registry was being replaced
				retry = time.After(backoff)
				backoff = min(2*backoff, 100*time.Millisecond)
				continue
			}
			if rep.Err != nil {
				return fmt.Errorf("wait for %d jobs: %w", len(ids), rep.Err)
			}
			return nil
		case <-retry:
			retry = nil
			subscribe()
		case <-ctx.Done():
			e.sys.Root.Send(e.core.registry.Load(), &cancelAwait{waiterID: w.id})
			return fmt.Errorf("wait for %d jobs: %w: %w", len(ids), messages.ErrRegistryNotReached, ctx.Err())
		case <-e.core.stopCtx.Done():
			return fmt.Errorf("wait for %d jobs: %w", len(ids), messages.ErrEngineClosed)
		case <-tick.C:
			e.waitChecks.Add(1)
			res, err := e.askOnce(ctx, &awaitCheck{waiterID: w.id})
			if err == nil && !res.(*awaitCheckReply).known {
				subscribe() // lost, not late: ask again (an answer already sent wins)
			}
		}
	}
}

// Lease holds nodes and racks for a synchronous operation until Release
// (or the lease's TTL). The reply says which nodes were refused, and why.
func (e *Engine) Lease(ctx context.Context, req messages.AcquireLease) (messages.AcquireLeaseReply, error) {
	if req.ID == "" {
		req.ID = "lease-" + uuid.NewString()
	}
	res, err := e.ask(ctx, &req)
	if err != nil {
		return messages.AcquireLeaseReply{}, fmt.Errorf("lease for %s: %w", req.Operation, err)
	}
	rep := res.(*messages.AcquireLeaseReply)
	return *rep, nil
}

// Release gives a lease back. It is safe to call for a refused or expired
// lease, and more than once.
func (e *Engine) Release(ctx context.Context, leaseID string) error {
	if _, err := e.ask(ctx, &messages.ReleaseLease{ID: leaseID}); err != nil {
		return fmt.Errorf("release lease %s: %w", leaseID, err)
	}
	return nil
}

// Reap runs one reaper pass now and returns the number of evicted jobs.
func (e *Engine) Reap(ctx context.Context) (int, error) {
	res, err := e.ask(ctx, &messages.ReapExpired{})
	if err != nil {
		return 0, fmt.Errorf("reap jobs: %w", err)
	}
	return res.(*messages.ReapExpiredReply).Evicted, nil
}

// BeginShutdown makes the registry refuse every new job and cancels every
// running leaf job. It returns the ids of the jobs signalled.
func (e *Engine) BeginShutdown(ctx context.Context) ([]string, error) {
	res, err := e.ask(ctx, &messages.BeginShutdown{})
	if err != nil {
		return nil, fmt.Errorf("begin shutdown: %w", err)
	}
	return res.(*messages.BeginShutdownReply).Signalled, nil
}

// Drain begins shutdown, waits until ctx ends for the signalled jobs to
// reach a terminal state, then closes the engine. Workflows get their
// context cancelled when shutdown begins; a step shielded from shutdown
// (messages.ShieldFromShutdown) may finish within the window. Jobs still
// running when ctx ends are sealed Failed as interrupted, with the stage
// they were at, and logged. It returns the number of jobs signalled and a
// non-nil error when the wait was cut short.
func (e *Engine) Drain(ctx context.Context) (int, error) {
	ids, err := e.BeginShutdown(ctx)
	if err == nil {
		if err = e.Wait(ctx, ids...); err != nil {
			e.core.log.Warn().Int("jobs", len(ids)).Err(err).Msg("graceful shutdown wait timed out; some jobs did not reach a terminal state before the deadline")
		}
	}
	left := closeGrace
	if dl, ok := ctx.Deadline(); ok {
		left = max(time.Until(dl), closeGrace)
	}
	e.closeWithin(left)
	return len(ids), err
}

// Close stops every engine actor and goroutine and waits for them, at most
// DefaultCloseTimeout. Jobs still running are sealed as interrupted first.
func (e *Engine) Close() { e.closeWithin(DefaultCloseTimeout) }

// closeGrace is the least time Close gets to stop the actors after a drain
// whose deadline has passed.
const closeGrace = time.Second

// closeWithin closes the engine, bounded by d even when a workflow ignores
// its context: what is still running then is named in the log.
func (e *Engine) closeWithin(d time.Duration) {
	e.closeOnce.Do(func() {
		deadline := time.Now().Add(d)
		close(e.reaperStop)
		<-e.reaperDone
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		if res, err := e.ask(ctx, &interruptJobs{}); err != nil {
			e.core.log.Error().Err(err).Msg("interrupt running jobs")
		} else if n := len(res.(*interruptJobsReply).jobs); n > 0 {
			e.core.log.Error().Int("jobs", n).Msg("jobs interrupted by shutdown")
		}
		e.stopEverything(ctx, deadline)
	})
}

// stopEverything is the end of Close and Abandon: it stops the engine's
// actors, then the journal (its queue written by deadline, unless
// abandoned), and waits for the workflows until deadline.
func (e *Engine) stopEverything(ctx context.Context, deadline time.Time) {
	if res, err := e.ask(ctx, &stopActors{}); err != nil {
		e.core.log.Error().Err(err).Msg("stop job engine actors")
	} else {
		futures := make([]*actor.Future, 0, len(res.(*stopActorsReply).pids))
		for _, pid := range res.(*stopActorsReply).pids {
			futures = append(futures, e.sys.Root.StopFuture(pid))
		}
		for _, f := range futures {
			_ = f.Wait()
		}
	}
	e.closed.Store(true)
	e.core.feed.Close()
	e.core.stopWork()
	_ = e.sys.Root.StopFuture(e.keeper).Wait()
	if j := e.core.journal; j != nil { // the registry is gone: nothing more is added
		flushBy := time.Now().Add(max(time.Until(deadline), closeGrace))
		if j.unavailable() { // a failing store gets a moment, not the whole window
			flushBy = time.Now().Add(closeGrace)
		}
		j.close(flushBy) // an abandoned journal is closed already
	}
	e.core.dispatcher.close()
	done := make(chan struct{})
	go func() { e.core.workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Until(deadline)):
		e.core.log.Error().Strs("job_ids", e.core.workflows.list()).
			Msg("job workflows still running after shutdown; they ignore cancellation and end with the process")
	}
}

// awaitForCleanup waits for jobs on behalf of a cleanup plan; false means
// the timeout elapsed or the engine closed first.
func (e *Engine) awaitForCleanup(ids []string, timeout time.Duration) bool {
	ctx, cancel := e.core.stopCtx, context.CancelFunc(func() {})
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	return e.Wait(ctx, ids...) == nil
}
