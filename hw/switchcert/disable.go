package switchcert

import (
	"github.com/rmsd/rmsd/hw/timeline"

	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// DisablePlan moves Services on Node back from mTLS to plain TLS over the
// NVOS CLI, then applies and saves the configuration. It needs no material.
type DisablePlan struct {
	Node     hw.Node
	Services []string
}

// Disable stages, in order.
var disableStages = []string{"disable_services", "apply_config", "save_config"}

// Switch answers the disable flow reads.
const (
	notOneOf        = "'mtls' is not one of"
	clusterDisabled = "cluster is not enabled"
	noConfigDiff    = "no config diff"
)

// Per-service outcomes in result_json.
const (
	outcomeUnset        = "unset"
	outcomeAlready      = "already_disabled"
	outcomeNoCluster    = "cluster_not_enabled"
	outcomeRestored     = "restored"
	outcomeApplyNoDiff  = "no_change"
	outcomeApplyChanged = "applied"
)

// Workflow returns the job workflow of the plan.
func (p DisablePlan) Workflow(d Deps) messages.Workflow {
	d = d.withDefaults()
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		tl := timeline.New(d.Now, timeline.Named(disableStages...))
		outcomes := map[string]string{}
		fields := func(status, errMsg string) map[string]any {
			f := map[string]any{"status": status, "rack_id": p.Node.RackID, "node_id": p.Node.ID, "services": outcomes}
			if errMsg != "" {
				f["error_message"] = errMsg
			}
			return f
		}
		var changed bool
		for i, name := range disableStages {
			if ctx.Err() != nil {
				p.cancelled(ctx, job, tl, fields, "before "+name)
				return
			}
			job.Progress(fmt.Sprintf("Switch mTLS disable stage %d/%d: %s", i+1, len(disableStages), name))
			tl.Begin(i, name)
			var err error
			details := map[string]string{}
			switch i {
			case 0:
				changed, err = p.unset(ctx, d, outcomes)
				for k, v := range outcomes {
					details[k] = v
				}
			case 1:
				var diff bool
				diff, err = p.cli(ctx, d, "nv config apply --assume-yes")
				details["apply"] = outcomeApplyNoDiff
				if diff {
					details["apply"], changed = outcomeApplyChanged, true
				}
			default:
				_, err = p.cli(ctx, d, "nv config save")
			}
			switch {
			case err == nil:
				tl.End(i, statusCompleted, name+": done", details)
			case ctx.Err() != nil:
				tl.End(i, statusFailed, "cancelled", details)
				p.cancelled(ctx, job, tl, fields, "during "+name)
				return
			default:
				msg := fmt.Sprintf("switch mTLS disable on %s failed in stage %s: %v", p.Node.ID, name, err)
				tl.End(i, statusFailed, err.Error(), details)
				_ = job.Fail(messages.Failure{Code: classify(err), Description: "Switch mTLS disable failed in stage " + name,
					Message: msg, ResultJSON: result(tl, fields(statusFailed, msg))})
				return
			}
		}
		if !changed {
			_ = job.Complete("Switch mTLS already disabled", result(tl, fields(statusDisabled, "")))
			return
		}
		_ = job.Complete("Switch mTLS disabled", result(tl, fields(statusCompleted, "")))
	})
}

func (p DisablePlan) cancelled(ctx context.Context, job messages.Reporter, tl *timeline.Timeline, fields func(string, string) map[string]any, where string) {
	msg := "switch mTLS disable job cancelled " + where
	if errors.Is(context.Cause(ctx), messages.ErrShuttingDown) {
		msg += ": rmsd is shutting down"
	}
	_ = job.Fail(messages.Failure{Code: messages.ErrorOther, Description: "Switch mTLS disable cancelled",
		Message: msg, ResultJSON: result(tl, fields(statusCancelled, msg))})
}

// run runs commands over SSH, pause apart.
func (p DisablePlan) run(ctx context.Context, d Deps, commands ...string) ([]platform.CommandOutcome, error) {
	var out []platform.CommandOutcome
	err := d.step(ctx, p.Node, func(ctx context.Context, c platform.SwitchCertifier) (err error) {
		out, err = c.RunCLI(ctx, d.CLIPause, commands...)
		return err
	})
	return out, err
}

// cli runs one configuration command that must succeed; it reports whether
// the switch said the command changed something.
func (p DisablePlan) cli(ctx context.Context, d Deps, command string) (bool, error) {
	out, err := p.run(ctx, d, command)
	if err != nil {
		return false, err
	}
	if o := out[0]; o.Err != nil {
		return false, fmt.Errorf("%s: %w: %s", command, o.Err, clipOutput(o.Output))
	}
	return !strings.Contains(strings.ToLower(out[0].Output), noConfigDiff), nil
}

// unset runs each service's commands and records its outcome; it reports
// whether a cluster app's encryption was restored (a change outside the
// configuration apply).
func (p DisablePlan) unset(ctx context.Context, d Deps, outcomes map[string]string) (bool, error) {
	restored := false
	for _, s := range p.Services {
		switch s {
		case ServiceNVUEAPI:
			if err := p.must(ctx, d, "nv unset system api mtls ca-certificate"); err != nil {
				return restored, err
			}
			outcomes[s] = outcomeUnset
		case ServiceTelemetryInterface:
			out, err := p.run(ctx, d, "nv unset system gnmi-server mtls certificate")
			if err != nil {
				return restored, err
			}
			first := out[0]
			if first.Err == nil {
				outcomes[s] = outcomeUnset
				continue
			}
			out, err = p.run(ctx, d, "nv unset system gnmi-server mtls ca-certificate")
			if err != nil {
				return restored, err
			}
			second := out[0]
			switch {
			case second.Err == nil:
				outcomes[s] = outcomeUnset
			case strings.Contains(first.Output, notOneOf) && strings.Contains(second.Output, notOneOf):
				outcomes[s] = outcomeAlready
			default:
				return restored, fmt.Errorf("%s: %w: %s", second.Command, second.Err, clipOutput(second.Output))
			}
		default:
			cmd := "nv action restore cluster apps " + clusterApp[s] + " manager encryption"
			out, err := p.run(ctx, d, cmd)
			if err != nil {
				return restored, err
			}
			switch o := out[0]; {
			case o.Err == nil:
				outcomes[s], restored = outcomeRestored, true
			case strings.Contains(strings.ToLower(o.Output), clusterDisabled):
				outcomes[s] = outcomeNoCluster
			default:
				return restored, fmt.Errorf("%s: %w: %s", cmd, o.Err, clipOutput(o.Output))
			}
		}
	}
	return restored, nil
}

// must runs one command that must exit 0.
func (p DisablePlan) must(ctx context.Context, d Deps, command string) error {
	_, err := p.cli(ctx, d, command)
	return err
}

// clipOutput bounds device output quoted in an error.
func clipOutput(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}
