package actors

import (
	"context"
	"errors"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// Causes of a workflow's cancellation.
var (
	errCancelled    = errors.New("job cancelled")
	errActorStopped = errors.New("jobs: job actor stopped")
)

// jobActor runs one job's workflow in a goroutine it starts and cancels, and
// relays the workflow's reports to the registry. It delivers exactly one
// terminal report, re-sending it until the registry acknowledges it (the
// registry may be restarting), then stops itself. It is never restarted.
type jobActor struct {
	id, parentID string
	registry     *actor.PID
	wf           messages.Workflow
	cleanup      *messages.CleanupPlan
	core         *core

	// gated is set when the job's admission is not yet durable: the
	// workflow waits for startWork (sent once the journal holds the job),
	// so no hardware is touched for a job a restart could not bring back.
	gated   bool
	started bool // the worker goroutine runs (or ran)

	hardStop, softStop context.CancelCauseFunc
	cancelledBy        error // a named cancel's cause (cancel.go)
	lastDesc           string
	pending            *messages.Outcome // terminal report not yet acknowledged
}

// startWork lets a gated job's workflow run: its admission is durable.
type startWork struct{}

// Receive implements actor.Actor.
func (j *jobActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		if !j.gated {
			j.start(ctx, j.wf)
		}
	case *startWork:
		if !j.started {
			j.start(ctx, j.wf)
		}
	case *workerProgress:
		if j.pending == nil {
			j.lastDesc = m.description
			ctx.Send(j.registry, &jobProgress{id: j.id, description: m.description})
		}
	case *workerFinished:
		if j.pending == nil {
			out := namedCause(m.outcome, j.cancelledBy)
			j.pending = &out
			ctx.Request(j.registry, &jobFinished{id: j.id, outcome: out})
		}
	case *finishAck:
		j.pending = nil
		ctx.Stop(ctx.Self())
	case *resync:
		j.registry = m.registry
		switch {
		case j.pending != nil:
			ctx.Request(j.registry, &jobFinished{id: j.id, outcome: *j.pending})
		case j.lastDesc != "":
			ctx.Send(j.registry, &jobProgress{id: j.id, description: j.lastDesc})
		}
	case *cancelWork:
		if !j.started { // cancelled before its admission was durable
			j.start(ctx, notStarted(m.cause))
			return
		}
		if m.named && j.cancelledBy == nil {
			j.cancelledBy = m.cause
		}
		if m.soft {
			j.softStop(m.cause)
		} else {
			j.hardStop(m.cause)
		}
	case *actor.Stopping:
		if !j.started {
			j.core.workers.Done() // the worker goroutine will never run
			return
		}
		cause := errActorStopped
		if a := j.core.abandoned.Load(); a != nil {
			cause = a.cause // the engine is given up: say why
		}
		j.hardStop(cause)
		if j.pending != nil {
			// Sent before our Terminated, so the registry records it before
			// it considers the fallback seal.
			ctx.Send(j.registry, &jobFinished{id: j.id, outcome: *j.pending})
		}
	default:
		crashIfAsked(m)
	}
}

// start runs wf (the job's workflow, or its refusal) in the worker
// goroutine.
func (j *jobActor) start(ctx actor.Context, wf messages.Workflow) {
	j.started = true
	// The job id rides on both contexts (the shielded one too) to every
	// southbound request the workflow makes (hw.HolderHeader).
	hard, hardStop := context.WithCancelCause(hw.WithHolder(context.Background(), j.id))
	soft, softStop := context.WithCancelCause(hard)
	j.hardStop, j.softStop = hardStop, softStop
	h := &handle{id: j.id, parentID: j.parentID, root: ctx.ActorSystem().Root, self: ctx.Self()}
	plan, c := j.cleanup, j.core
	j.wf, j.cleanup = nil, nil
	c.workflows.begin(j.id) // before this actor can end: its holds wait for the return
	go runWorker(messages.WorkflowContext(soft, hard), c, wf, h, plan)
}

// notStarted is the stand-in workflow of a job cancelled before its own
// could start: it fails the job, saying why, and touches nothing.
func notStarted(cause error) messages.Workflow {
	return messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		f := messages.NewFailure(messages.ErrorOther, fmt.Sprintf("job cancelled before it started: %v", cause))
		f.Description = "Cancelled"
		_ = job.Fail(f)
	})
}

// runWorker runs a workflow and guarantees a terminal report: a workflow
// that returns or panics without one yields the abandoned failure. The
// report is sent only once the workflow has returned, so the job's holds
// end with it; if the registry sealed the job earlier (its actor died, or
// shutdown interrupted it) and kept its holds, it is told of the return
// directly. The cleanup plan runs afterwards, whatever happened.
func runWorker(ctx context.Context, c *core, wf messages.Workflow, h *handle, plan *messages.CleanupPlan) {
	defer c.workers.Done()
	func() {
		defer func() {
			if p := recover(); p != nil {
				c.log.Warn().Str("job_id", h.id).Str("panic", fmt.Sprint(p)).Msg("job worker task exited unsuccessfully")
			}
		}()
		wf.Run(ctx, h)
	}()
	if h.sealIfOpen(abandonedFailure) {
		c.log.Warn().Str("job_id", h.id).Msg(abandonedMessage)
	}
	awaited := c.workflows.end(h.id)
	h.deliver()
	if awaited {
		c.reportReturned(h.id)
	}
	if plan != nil {
		report := runCleanup(c, h.id, plan)
		if c.onCleanup != nil {
			c.onCleanup(report)
		}
	}
}
