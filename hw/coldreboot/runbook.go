package coldreboot

import (
	"github.com/rmsd/rmsd/hw/pause"

	"github.com/rmsd/rmsd/hw/timeline"

	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// Deps are what the runbook drives the rack with.
type Deps struct {
	Nodes *nodeops.Runner
	// DrainWindow is rmsd's shutdown drain window ([workflows]
	// drain_timeout_seconds). A run past shelves-off that a shutdown would
	// cut short stops and restores the shelves RestoreTimeout before it
	// ends; 0 means unknown (only a hard stop ends such a run).
	DrainWindow time.Duration
	// Now is the clock of the timeline (time.Now when nil).
	Now func() time.Time
}

// stage is one step of the runbook.
type stage struct {
	name, step, message string
	run                 func(r *run, ctx context.Context) (map[string]string, error)
}

// stages is the runbook, in order. Steps 9 (fabric provisioning) and 13
// (GPU checks) of the rack runbook are out of scope, as upstream.
var stages = []stage{
	{"prestage_shutdown_compute", "0", "shutting down compute trays gracefully", (*run).shutdownCompute},
	{"prestage_verify_compute_down", "0", "waiting for compute trays to power off", (*run).verifyComputeDown},
	{"power_off_shelves", "1", "powering off power shelves", (*run).shelvesOff},
	{"verify_discharged", "2-3", "waiting for trays to discharge", (*run).verifyDischarged},
	{"power_on_shelves", "4", "powering on power shelves", (*run).shelvesOn},
	{"verify_bmc_up", "5-6", "waiting for power shelves and BMCs to come back", (*run).verifyBMCUp},
	{"verify_nvos_ready", "7-8", "waiting for NVOS on every switch", (*run).verifyNVOSReady},
	{"power_on_compute", "10", "powering on compute trays", (*run).computeOn},
	{"wait_compute_boot", "11-12", "waiting for compute trays to boot", (*run).waitBoot},
}

// timelineStages are the runbook's stages as the timeline records them.
func timelineStages() []timeline.Stage {
	out := make([]timeline.Stage, len(stages))
	for i, s := range stages {
		out[i] = timeline.Stage{Name: s.name, Step: s.step}
	}
	return out
}

// run is one execution of a plan.
type run struct {
	plan    Plan
	deps    Deps
	t       Timing
	leftOut []*leftOutState
}

// shieldedFrom is the first stage that must not be abandoned half-way: from
// the moment the shelves go off, stopping would leave the rack dark or
// half-powered. From there on the runbook runs on a guard (see guard.go):
// a shutdown lets it finish, and whatever stops it earlier (a cancel, the
// end of the drain window, a hard stop) has it restore the shelves first.
const shieldedFrom = "power_off_shelves"

// Workflow returns the runbook for p as a job workflow. The nodes it drives
// are held by the job engine for the job's whole life (see
// messages.Reservation): the workflow itself holds nothing.
func (p Plan) Workflow(deps Deps) messages.Workflow {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		r := &run{plan: p, deps: deps, t: p.Timing, leftOut: newLeftOut(p.LeftOut)}
		r.execute(ctx, job)
	})
}

func (r *run) execute(ctx context.Context, job messages.Reporter) {
	tl := timeline.New(r.deps.Now, timelineStages())
	stageCtx := ctx
	var g *guard
	defer func() {
		if g != nil {
			g.stop()
		}
	}()
	for i, s := range stages {
		if s.name == shieldedFrom {
			if ctx.Err() != nil { // stopped before the shelves go off: nothing to restore
				job.Progress(s.description())
				tl.Begin(i, s.message)
				r.cancelled(ctx, job, tl, i, nil)
				return
			}
			g = newGuard(ctx, r.deps.DrainWindow, r.t.restoreTimeout())
			stageCtx = g.ctx
		}
		job.Progress(s.description())
		tl.Begin(i, s.message)
		details, err := s.run(r, stageCtx)
		if err == nil {
			tl.End(i, timeline.Completed, s.message+": done", details)
			continue
		}
		switch {
		case g != nil && stageCtx.Err() != nil:
			r.stopped(ctx, job, tl, i, details, context.Cause(stageCtx))
		case stageCtx.Err() != nil:
			r.cancelled(ctx, job, tl, i, details)
		default:
			r.failed(ctx, job, tl, i, details, err, g != nil && shelvesMayBeOff(s.name))
		}
		return
	}
	_ = job.Complete("Cold reboot completed", r.result(tl, report{Status: "completed"}))
}

// cancelled records a run stopped before the shelves went off.
func (r *run) cancelled(ctx context.Context, job messages.Reporter, tl *timeline.Timeline, i int, details map[string]string) {
	s := stages[i]
	msg := fmt.Sprintf("cold reboot cancelled during %s", s.name)
	if errors.Is(context.Cause(ctx), messages.ErrShuttingDown) {
		msg += ": rmsd is shutting down"
	}
	tl.End(i, timeline.Failed, msg, details)
	_ = job.Fail(messages.Failure{Code: messages.ErrorOther, Description: "Rack reboot cancelled at step " + s.step,
		Message: msg, ResultJSON: r.result(tl, report{Status: "cancelled", ErrorMessage: msg})})
}

// stopped records a run stopped past shelves-off (cancelled, or rmsd
// shutting down) after the restore step has powered the shelves back on.
func (r *run) stopped(ctx context.Context, job messages.Reporter, tl *timeline.Timeline, i int, details map[string]string, cause error) {
	s := stages[i]
	restored := r.restore(ctx)
	status, msg, desc := "cancelled", fmt.Sprintf("cold reboot cancelled at stage %q: %s", s.name, restored),
		"Rack reboot cancelled at step "+s.step+": "+restored
	if shutdown(cause) || errors.Is(context.Cause(ctx), messages.ErrShuttingDown) {
		status, msg, desc = "interrupted", fmt.Sprintf("interrupted by shutdown of rmsd at stage %q: %s", s.name, restored),
			"Rack reboot interrupted at step "+s.step+" by shutdown of rmsd: "+restored
	}
	tl.End(i, timeline.Failed, msg, details)
	_ = job.Fail(messages.Failure{Code: messages.ErrorOther, Description: desc, Message: msg,
		ResultJSON: r.result(tl, report{Status: status, ErrorMessage: msg, Restore: restored})})
}

// failed records a stage that failed; when the shelves may be off, the
// restore step powers them back on first.
func (r *run) failed(ctx context.Context, job messages.Reporter, tl *timeline.Timeline, i int, details map[string]string, err error, restore bool) {
	s := stages[i]
	msg := fmt.Sprintf("cold reboot stage %s failed: %v", s.name, err)
	desc := "Rack reboot failed at step " + s.step + ": " + s.message
	rep := report{Status: "failed"}
	if restore {
		rep.Restore = r.restore(ctx)
		msg += "; " + rep.Restore
		desc += "; " + rep.Restore
	}
	rep.ErrorMessage = msg
	tl.End(i, timeline.Failed, err.Error(), details)
	_ = job.Fail(messages.Failure{Code: classify(err), Description: desc, Message: msg, ResultJSON: r.result(tl, rep)})
}

// shelvesMayBeOff reports whether a stage that failed may have left the
// shelves off.
func shelvesMayBeOff(stage string) bool {
	return stage == "power_off_shelves" || stage == "verify_discharged" || stage == "power_on_shelves"
}

// each runs op on nodes and returns the failures by node id.
func (r *run) each(ctx context.Context, nodes []hw.Node, op nodeops.Op) map[string]error {
	failed := map[string]error{}
	for i, err := range r.deps.Nodes.Each(ctx, nodes, op) {
		if err != nil {
			failed[nodes[i].ID] = err
		}
	}
	return failed
}

// firstFailure turns per-node failures into one error naming every node.
func firstFailure(what string, failed map[string]error) error {
	if len(failed) == 0 {
		return nil
	}
	ids := make([]string, 0, len(failed))
	for id := range failed {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return fmt.Errorf("%s failed on %d node(s) (%s): %s: %w", what, len(ids), strings.Join(ids, ", "), ids[0], failed[ids[0]])
}

func setPower(op platform.PowerOp) nodeops.Op {
	return func(ctx context.Context, _ int, d platform.Device) error { return d.SetPower(ctx, op) }
}

func (r *run) shutdownCompute(ctx context.Context) (map[string]string, error) {
	return nil, firstFailure("graceful shutdown", r.each(ctx, r.plan.Compute, setPower(platform.PowerGracefulShutdown)))
}

// shelvesOff records the power state of the left-out trays, then switches
// every listed shelf off.
func (r *run) shelvesOff(ctx context.Context) (map[string]string, error) {
	details := r.recordLeftOut(ctx)
	return details, firstFailure("power shelf off", r.each(ctx, r.plan.Shelves, setPower(platform.PowerOff)))
}

func (r *run) shelvesOn(ctx context.Context) (map[string]string, error) {
	return nil, firstFailure("power shelf on", r.each(ctx, r.plan.Shelves, setPower(platform.PowerOn)))
}

// computeOn powers on the listed compute trays and the left-out trays that
// were On before the shelves went off.
func (r *run) computeOn(ctx context.Context) (map[string]string, error) {
	failed := r.each(ctx, r.plan.Compute, setPower(platform.PowerOn))
	for id, err := range r.restoreLeftOut(ctx) {
		failed[id] = err
	}
	return nil, firstFailure("power on", failed)
}

func (r *run) waitBoot(ctx context.Context) (map[string]string, error) {
	return map[string]string{"wait": r.t.ComputeBootWait.String()}, pause.For(ctx, r.t.ComputeBootWait)
}

// powerStates reads the power state of nodes; a node that cannot be read
// maps to its error.
func (r *run) powerStates(ctx context.Context, nodes []hw.Node) ([]platform.PowerState, []error) {
	states := make([]platform.PowerState, len(nodes))
	errs := r.deps.Nodes.Each(ctx, nodes, func(ctx context.Context, i int, d platform.Device) (err error) {
		states[i], err = d.PowerState(ctx)
		return err
	})
	return states, errs
}

func (r *run) verifyComputeDown(ctx context.Context) (map[string]string, error) {
	return r.poll(ctx, "compute trays still powered", r.t.PrestageShutdownFloor, r.t.PrestageShutdownPollMax,
		func(ctx context.Context) ([]string, error) {
			states, errs := r.powerStates(ctx, r.plan.Compute)
			var pending []string
			for i, n := range r.plan.Compute {
				if errs[i] != nil || states[i] != platform.PowerStateOff {
					pending = append(pending, n.ID)
				}
			}
			return pending, nil
		})
}

// verifyDischarged waits until no compute or switch BMC answers: the trays
// have lost standby power. Only a BMC nothing answers for is gone (see
// gone); one that answers anything (a refusal, 401, a broken TLS
// handshake) is still powered, and one whose name does not resolve is
// unknown, so still pending.
func (r *run) verifyDischarged(ctx context.Context) (map[string]string, error) {
	trays := append(append([]hw.Node(nil), r.plan.Compute...), r.plan.Switches...)
	return r.poll(ctx, "BMCs still reachable", r.t.DischargeFloor, r.t.DischargePollMax,
		func(ctx context.Context) ([]string, error) {
			errs := r.deps.Nodes.Each(ctx, trays, func(ctx context.Context, _ int, d platform.Device) error {
				p, ok := d.(platform.BMCProber)
				if !ok {
					return fmt.Errorf("%s cannot probe its BMC: %w", d.ID(), hw.ErrUnsupported)
				}
				return p.ProbeBMC(ctx)
			})
			var pending []string
			for i, n := range trays {
				if !gone(errs[i]) {
					pending = append(pending, stillThere(n.ID, errs[i]))
				}
			}
			return pending, nil
		})
}

// stillThere names a node whose BMC is still there, with what it answered
// when that was not a success.
func stillThere(id string, err error) string {
	if err == nil {
		return id
	}
	return fmt.Sprintf("%s (%v)", id, err)
}

// verifyBMCUp waits until every shelf reads On and every compute and switch
// BMC (the left-out trays that were On included) answers with a power
// state, all read in one batch per poll.
func (r *run) verifyBMCUp(ctx context.Context) (map[string]string, error) {
	nodes := append(append(append([]hw.Node(nil), r.plan.Shelves...), r.plan.Compute...), r.plan.Switches...)
	nodes = append(nodes, r.leftOutOnNodes()...)
	return r.poll(ctx, "not back", r.t.BMCUpFloor, r.t.BMCUpPollMax,
		func(ctx context.Context) ([]string, error) {
			var pending []string
			states, errs := r.powerStates(ctx, nodes)
			for i, n := range nodes {
				switch {
				case n.Type.Kind() == hw.KindPowerShelf && (errs[i] != nil || states[i] != platform.PowerStateOn):
					pending = append(pending, n.ID+" (power shelf not on)")
				case n.Type.Kind() != hw.KindPowerShelf && (errs[i] != nil || states[i] == platform.PowerStateUnknown):
					pending = append(pending, n.ID)
				}
			}
			return pending, nil
		})
}

// verifyNVOSReady asks every switch's NVUE API for /system, all switches at
// once, retrying the ones that did not answer with a doubling backoff.
func (r *run) verifyNVOSReady(ctx context.Context) (map[string]string, error) {
	pending := append([]hw.Node(nil), r.plan.Switches...)
	backoff := r.t.NVOSHelloBackoff
	for attempt := 1; ; attempt++ {
		errs := r.hello(ctx, pending)
		var still []hw.Node
		var lastErr error
		for i, n := range pending {
			if errs[i] != nil {
				still, lastErr = append(still, n), errs[i]
			}
		}
		pending = still
		if len(pending) == 0 {
			return map[string]string{"attempts": fmt.Sprint(attempt)}, nil
		}
		if attempt >= r.t.NVOSHelloAttempts {
			ids := make([]string, len(pending))
			for i, n := range pending {
				ids[i] = n.ID
			}
			return map[string]string{"attempts": fmt.Sprint(attempt)},
				fmt.Errorf("NVOS not ready on %s after %d attempts: %w", strings.Join(ids, ", "), attempt, lastErr)
		}
		if err := pause.For(ctx, backoff); err != nil {
			return nil, err
		}
		backoff *= 2
	}
}

// hello asks every switch's NVOS whether it is up, all at once through
// the node runner; the result has one error (or nil) per switch.
func (r *run) hello(ctx context.Context, switches []hw.Node) []error {
	return r.deps.Nodes.Each(ctx, switches, func(ctx context.Context, _ int, d platform.Device) error {
		p, ok := d.(platform.NVOSProber)
		if !ok {
			return fmt.Errorf("%s cannot probe NVOS: %w", d.ID(), hw.ErrUnsupported)
		}
		return p.ProbeNVOS(ctx)
	})
}

// poll waits floor, then calls check every PollInterval until it reports
// nothing pending or max has passed since the stage began.
func (r *run) poll(ctx context.Context, what string, floor, max time.Duration, check func(ctx context.Context) ([]string, error)) (map[string]string, error) {
	start := time.Now()
	if err := pause.For(ctx, floor); err != nil {
		return nil, err
	}
	polls := 0
	for {
		polls++
		pending, err := check(ctx)
		if err != nil {
			return nil, err
		}
		if len(pending) == 0 {
			return map[string]string{"polls": fmt.Sprint(polls), "waited": time.Since(start).Round(time.Millisecond).String()}, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		left := max - time.Since(start)
		if left <= 0 {
			sort.Strings(pending)
			return map[string]string{"polls": fmt.Sprint(polls)},
				fmt.Errorf("%w: %s after %s: %s", errStageTimeout, what, max, strings.Join(pending, ", "))
		}
		if err := pause.For(ctx, min(r.t.PollInterval, left)); err != nil {
			return nil, err
		}
	}
}

// errStageTimeout marks a stage whose condition did not hold in time.
var errStageTimeout = errors.New("timed out")
