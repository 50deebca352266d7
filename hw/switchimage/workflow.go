package switchimage

import (
	"github.com/rmsd/rmsd/hw/pause"

	"github.com/rmsd/rmsd/hw/timeline"

	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// stage is one step of the update.
type stage struct {
	name, message string
	run           func(r *run, ctx context.Context) (map[string]string, error)
}

// stages is the update, in order.
var stages = []stage{
	{"inspect_state", "reading the NVOS partitions", (*run).inspect},
	{"cleanup_old_partition", "uninstalling the other partition", (*run).cleanup},
	{"stage_image", "uploading the image", (*run).stageImage},
	{"trigger_install", "starting the install", (*run).trigger},
	{"wait_for_install_handoff", "waiting for the install to hand off to the reboot", (*run).handoff},
	{"wait_for_target_steady_state", "waiting for the switch to run the target build", (*run).steady},
}

// stageCount is len(stages), which the stages cannot refer to.
const stageCount = 6

// Errors that end a stage.
var (
	errTimeout         = errors.New("switchimage: timed out")
	errUnknownCurrent  = errors.New("switchimage: the switch reports no current partition")
	errInstallFailed   = errors.New("switchimage: image install failed")
	errUninstallFailed = errors.New("switchimage: image uninstall failed")
	errNoNVOS          = errors.New("switchimage: NVOS is not installed")
)

// errUpToDate ends the update early: nothing to do.
var errUpToDate = errors.New("switchimage: already up to date")

// run is one execution of a plan.
type run struct {
	plan Plan
	deps Deps
	t    Timing
	job  messages.Reporter

	state    nvue.ImageState // the last partition state read
	actionID string          // the install action
	// before is the first partition state read (inspect_state);
	// listedBefore and listedAfter whether NVUE listed the image before and
	// after stage_image (upstream's result keys, see upstreamResult).
	before                    *nvue.ImageState
	listedBefore, listedAfter bool
	// recovered is set once the admin password was recovered.
	recovered bool
	// onie is the ONIE version of a switch found without NVOS and
	// installed from ONIE (allow_onie_recovery); onieRefused is set when
	// such a switch was found and recovery was not allowed.
	onie        string
	onieRefused bool
	oniePath    string // where stage_image put the image in ONIE
}

// Workflow returns the update of p.Node as a job workflow. The job engine
// holds the node for the job's whole life.
//
// A cancelled job (a shutdown of rmsd) is Failed with status "cancelled";
// an install already started goes on on the switch, whose state is then
// for an operator to check.
func (p Plan) Workflow(d Deps) messages.Workflow {
	if d.Now == nil {
		d.Now = time.Now
	}
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		r := &run{plan: p, deps: d, t: d.Timing.withDefaults(), job: job}
		r.execute(ctx)
	})
}

func (r *run) execute(ctx context.Context) {
	names := make([]string, len(stages))
	for i, s := range stages {
		names[i] = s.name
	}
	tl := timeline.New(r.deps.Now, timeline.Named(names...))
	for i, s := range stages {
		if ctx.Err() != nil {
			r.cancelled(ctx, tl, "before "+s.name)
			return
		}
		r.job.Progress(fmt.Sprintf("Switch system image update stage %d/%d: %s", i+1, len(stages), s.message))
		tl.Begin(i, s.message)
		details, err := s.run(r, ctx)
		switch {
		case errors.Is(err, errUpToDate):
			tl.End(i, statusCompleted, fmt.Sprintf("already running %s on both partitions", r.plan.Target), details)
			_ = r.job.Complete(completedMessage, result(tl, r.summary(statusUpToDate, "")))
			return
		case err == nil:
			tl.End(i, statusCompleted, s.message+": done", details)
		case ctx.Err() != nil:
			tl.End(i, statusFailed, "cancelled", details)
			r.cancelled(ctx, tl, "during "+s.name)
			return
		default:
			msg := fmt.Sprintf("switch system image update of %s failed in stage %s: %v", r.plan.Node.ID, s.name, err)
			tl.End(i, statusFailed, err.Error(), details)
			_ = r.job.Fail(messages.Failure{Code: classify(err), Description: "Switch system image update failed in stage " + s.name,
				Message: msg, ResultJSON: result(tl, r.summary(statusFailed, msg))})
			return
		}
	}
	_ = r.job.Complete(completedMessage, result(tl, r.summary(statusCompleted, "")))
}

// cancelled records the job Failed with status "cancelled".
func (r *run) cancelled(ctx context.Context, tl *timeline.Timeline, where string) {
	msg := "switch system image job cancelled " + where
	if errors.Is(context.Cause(ctx), messages.ErrShuttingDown) {
		msg += ": rmsd is shutting down"
	}
	_ = r.job.Fail(messages.Failure{Code: messages.ErrorOther, Description: "Switch system image update cancelled",
		Message: msg, ResultJSON: result(tl, r.summary(statusCancelled, msg))})
}

func (r *run) summary(status, errMsg string) summary {
	return summary{Status: status, RackID: r.plan.Node.RackID, NodeID: r.plan.Node.ID, ImageFile: r.plan.ImageName,
		TargetBuild: r.plan.Target, CurrentBuild: r.state.CurrentBuild(), NextBuild: r.state.NextBuild(),
		AllowONIERecovery: r.plan.AllowONIERecovery, ONIERecovery: r.onieRecovery(), ErrorMessage: errMsg,
		upstream: r.upstreamResult(status)}
}

// onieRecovery says what became of allow_onie_recovery (result_json's
// onie_recovery).
func (r *run) onieRecovery() string {
	switch {
	case r.onie != "":
		return "performed from ONIE " + r.onie
	case r.onieRefused:
		return "needed but not allowed"
	default:
		return "not needed"
	}
}

// op runs fn on the switch as one short node operation.
func (r *run) op(ctx context.Context, fn func(ctx context.Context, im platform.SwitchImager) error) error {
	return r.deps.Nodes.One(ctx, r.plan.Node, func(ctx context.Context, _ int, d platform.Device) error {
		im, ok := d.(platform.SwitchImager)
		if !ok {
			return fmt.Errorf("%s cannot install NVOS images: %w", d.ID(), hw.ErrUnsupported)
		}
		return fn(ctx, im)
	})
}

// readImage reads the partitions into r.state.
func (r *run) readImage(ctx context.Context) error {
	return r.op(ctx, func(ctx context.Context, im platform.SwitchImager) error {
		st, err := im.SystemImage(ctx)
		if err == nil {
			r.state = st
		}
		return err
	})
}

// atTarget reports whether the switch runs the target now and after its
// next boot.
func (r *run) atTarget() bool {
	return r.state.CurrentBuild() == r.plan.Target && r.state.NextBuild() == r.plan.Target
}

func (r *run) stateDetails() map[string]string {
	return map[string]string{"current": r.state.CurrentBuild(), "next": r.state.NextBuild(),
		"partition1": r.state.Partition1, "partition2": r.state.Partition2}
}

func (r *run) inspect(ctx context.Context) (map[string]string, error) {
	if err := r.readImage(ctx); err != nil {
		return r.inspectONIE(ctx, err)
	}
	before := r.state
	r.before = &before
	if r.atTarget() {
		return r.stateDetails(), errUpToDate
	}
	return r.stateDetails(), nil
}

// inspectONIE looks for ONIE on a switch whose NVUE did not answer
// (readErr): a switch without NVOS runs ONIE's install environment. Found,
// the update goes on from ONIE when allow_onie_recovery is set, and fails
// saying so otherwise; not found, readErr stands.
func (r *run) inspectONIE(ctx context.Context, readErr error) (map[string]string, error) {
	if !errors.Is(readErr, nvue.ErrTransport) && !errors.Is(readErr, nvue.ErrTimeout) {
		return nil, readErr
	}
	var version string
	if err := r.op(ctx, func(ctx context.Context, im platform.SwitchImager) (err error) {
		version, err = im.ONIEVersion(ctx)
		return err
	}); err != nil {
		return nil, fmt.Errorf("%w (and no ONIE answered: %v)", readErr, err)
	}
	details := map[string]string{"nvos": "not installed", "onie": version}
	if !r.plan.AllowONIERecovery {
		r.onieRefused = true
		return details, fmt.Errorf("%w: %s runs ONIE %s; set allow_onie_recovery to install %s from ONIE",
			errNoNVOS, r.plan.Node.ID, version, r.plan.ImageName)
	}
	r.onie = version
	return details, nil
}

// cleanup uninstalls the non-current partition when it holds a build.
func (r *run) cleanup(ctx context.Context) (map[string]string, error) {
	if r.onie != "" {
		return map[string]string{"uninstalled": "", "onie": "no NVOS partition to clean"}, nil
	}
	if r.state.Current == 0 {
		return nil, errUnknownCurrent
	}
	other := r.state.OtherBuild()
	if other == "" {
		return map[string]string{"uninstalled": ""}, nil
	}
	var id string
	if err := r.op(ctx, func(ctx context.Context, im platform.SwitchImager) (err error) {
		id, err = im.UninstallOtherImage(ctx)
		return err
	}); err != nil {
		return nil, err
	}
	details := map[string]string{"uninstalled": other, "action_id": id}
	deadline := time.Now().Add(r.t.UninstallTimeout)
	for {
		var st nvue.ActionStatus
		if err := r.op(ctx, func(ctx context.Context, im platform.SwitchImager) (err error) {
			st, err = im.ImageAction(ctx, id)
			return err
		}); err != nil {
			return details, err
		}
		switch st.Phase() {
		case nvue.PhaseSucceeded, nvue.PhaseRebooting:
			return details, nil
		case nvue.PhaseFailed:
			if nvue.IsNothingToUninstall(st) {
				details["uninstalled"] = ""
				return details, nil
			}
			return details, fmt.Errorf("%w: action %s: %s", errUninstallFailed, id, st.Message())
		}
		if err := r.pause(ctx, deadline); err != nil {
			return details, fmt.Errorf("uninstall action %s: %w after %s", id, err, r.t.UninstallTimeout)
		}
	}
}

// stageImage uploads the image to the switch.
func (r *run) stageImage(ctx context.Context) (map[string]string, error) {
	f, err := os.Open(r.plan.File)
	if err != nil {
		return nil, fmt.Errorf("image file %s: %w", filepath.Base(r.plan.File), err)
	}
	defer func() { _ = f.Close() }() // read only
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("image file %s: %w", filepath.Base(r.plan.File), err)
	}
	if r.onie != "" {
		err = r.op(ctx, func(ctx context.Context, im platform.SwitchImager) (err error) {
			r.oniePath, err = im.StageONIEImage(ctx, platform.SystemImageUpload{Name: r.plan.ImageName, Body: f, Size: info.Size()})
			return err
		})
		return map[string]string{"path": r.oniePath, "bytes": fmt.Sprint(info.Size()), "via": "ONIE shell"}, err
	}
	var staged platform.StagedImage
	err = r.op(ctx, func(ctx context.Context, im platform.SwitchImager) (err error) {
		staged, err = im.StageSystemImage(ctx, platform.SystemImageUpload{Name: r.plan.ImageName, Body: f, Size: info.Size()})
		return err
	})
	r.listedBefore, r.listedAfter = staged.ListedBefore, staged.ListedAfter
	details := map[string]string{"path": staged.Path, "bytes": fmt.Sprint(info.Size()),
		"upload_skipped": fmt.Sprint(staged.Skipped), "listed_before": fmt.Sprint(staged.ListedBefore),
		"listed_after": fmt.Sprint(staged.ListedAfter)}
	return details, err
}

// trigger starts the install: NVUE's @install, or ONIE's installer.
func (r *run) trigger(ctx context.Context) (map[string]string, error) {
	if r.onie != "" {
		var last string
		err := r.op(ctx, func(ctx context.Context, im platform.SwitchImager) (err error) {
			last, err = im.InstallFromONIE(ctx, r.oniePath, r.t.HandoffTimeout) // the installer is the hand-off
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errInstallFailed, err)
		}
		return map[string]string{"installer": "onie-nos-install " + r.oniePath, "output": last}, nil
	}
	err := r.op(ctx, func(ctx context.Context, im platform.SwitchImager) (err error) {
		r.actionID, err = im.InstallSystemImage(ctx, r.plan.ImageName)
		return err
	})
	if err != nil {
		return nil, err
	}
	return map[string]string{"action_id": r.actionID}, nil
}

// handoff follows the install action until it succeeds or announces the
// reboot. A read that fails in transport or with an HTTP error is retried
// (the switch may already be rebooting); a 401 means the install reset
// the login, so it has handed off.
func (r *run) handoff(ctx context.Context) (map[string]string, error) {
	if r.onie != "" { // ONIE's installer returns once it has installed
		return map[string]string{"handoff": "onie-nos-install finished; the switch reboots into NVOS"}, nil
	}
	deadline := time.Now().Add(r.t.HandoffTimeout)
	details := map[string]string{"action_id": r.actionID}
	reads := 0
	for {
		reads++
		var st nvue.ActionStatus
		err := r.op(ctx, func(ctx context.Context, im platform.SwitchImager) (err error) {
			st, err = im.ImageAction(ctx, r.actionID)
			return err
		})
		details["reads"] = fmt.Sprint(reads)
		switch {
		case errors.Is(err, nvue.ErrUnauthorized):
			details["handoff"] = "login refused (the install reset it)"
			return details, nil
		case err != nil && !retryable(err):
			return details, err
		case err == nil && st.Phase() == nvue.PhaseFailed:
			return details, fmt.Errorf("%w: action %s: %s", errInstallFailed, r.actionID, st.Message())
		case err == nil && st.Phase() != nvue.PhaseRunning:
			details["handoff"] = st.Message()
			return details, nil
		}
		if err := r.pause(ctx, deadline); err != nil {
			return details, fmt.Errorf("install action %s: %w after %s", r.actionID, err, r.t.HandoffTimeout)
		}
	}
}

// steady waits until the switch reports the target as current and next
// build, through its reboot, in successive windows. The first 401 for the
// admin user is the password an install expired: it is recovered once.
func (r *run) steady(ctx context.Context) (map[string]string, error) {
	details := map[string]string{}
	if err := pause.For(ctx, r.t.SteadyDelay); err != nil {
		return details, err
	}
	reads := 0
	var lastErr error
	for w, window := range r.t.SteadyWindows {
		details["window"] = fmt.Sprintf("%d of %d", w+1, len(r.t.SteadyWindows))
		r.job.Progress(fmt.Sprintf("Switch system image update stage %d/%d: waiting for %s on %s (window %d of %d)",
			stageCount, stageCount, r.plan.Target, r.plan.Node.ID, w+1, len(r.t.SteadyWindows)))
		deadline := time.Now().Add(window)
		for {
			reads++
			details["reads"] = fmt.Sprint(reads)
			err := r.readImage(ctx)
			switch {
			case err == nil && r.atTarget():
				for k, v := range r.stateDetails() {
					details[k] = v
				}
				details["admin_password_recovered"] = fmt.Sprint(r.recovered)
				return details, nil
			case errors.Is(err, nvue.ErrUnauthorized) && !r.recovered && r.plan.Node.Host != nil &&
				r.plan.Node.Host.Credentials.Username == "admin":
				r.recovered = true
				if err := r.op(ctx, func(ctx context.Context, im platform.SwitchImager) error {
					return im.RecoverAdminPassword(ctx)
				}); err != nil {
					return details, fmt.Errorf("after the install: %w", err)
				}
				details["admin_password_recovered"] = "true"
				continue
			case err != nil && !retryable(err):
				return details, err
			}
			lastErr = err
			if err := pauseFor(ctx, r.t.SteadyInterval, deadline); err != nil {
				if ctx.Err() != nil {
					return details, err
				}
				break
			}
		}
	}
	var total time.Duration
	for _, w := range r.t.SteadyWindows {
		total += w
	}
	msg := fmt.Sprintf("the switch did not report %s as current and next build within %s", r.plan.Target, total)
	if lastErr != nil {
		return details, fmt.Errorf("%w: %s (last read: %v)", errTimeout, msg, lastErr)
	}
	return details, fmt.Errorf("%w: %s (current %s, next %s)", errTimeout, msg, orNone(r.state.CurrentBuild()), orNone(r.state.NextBuild()))
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// retryable reports a read failure worth another try while a switch
// installs and reboots: no answer, or an HTTP error status other than 401
// (which the callers handle first).
func retryable(err error) bool {
	for _, e := range []error{nvue.ErrTransport, nvue.ErrTimeout, nvue.ErrServer, nvue.ErrNotFound, nvue.ErrRequest} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// pause waits one action poll interval, or fails with errTimeout when
// deadline comes first.
func (r *run) pause(ctx context.Context, deadline time.Time) error {
	return pauseFor(ctx, r.t.ActionPollInterval, deadline)
}

// pauseFor waits interval, or fails with errTimeout when deadline comes
// first.
func pauseFor(ctx context.Context, interval time.Duration, deadline time.Time) error {
	left := time.Until(deadline)
	if left <= 0 {
		return errTimeout
	}
	return pause.For(ctx, min(interval, left))
}
