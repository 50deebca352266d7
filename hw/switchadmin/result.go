package switchadmin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/messages"
)

// Sentinels of the workflows' own refusals.
var (
	// errCredentials: the switch refused every login the workflow may use.
	errCredentials = errors.New("switchadmin: credentials rejected")
	// errNotPrimary: the switch's cluster is not enabled (it is not the
	// fabric's primary), so it has no SDN configuration to reset.
	errNotPrimary = errors.New("switchadmin: cluster is not enabled on this switch")
)

// run is one workflow execution on one switch: what it reports to its job.
type run struct {
	node hw.Node
	job  messages.Reporter
	// secrets are scrubbed from every message the job records.
	secrets []hw.Secret
	// phase is the step under way, named in the result document.
	phase string
}

// progress enters phase and describes it.
func (r *run) progress(phase, description string) {
	r.phase = phase
	r.job.Progress(description)
}

// complete records success with a result document holding fields besides
// the common ones.
func (r *run) complete(description string, fields map[string]any) {
	doc := map[string]any{"status": "completed", "rack_id": r.node.RackID, "node_id": r.node.ID}
	for k, v := range fields {
		doc[k] = v
	}
	_ = r.job.Complete(description, r.document(doc)) // a terminal state already recorded stands
}

// fail records err as the job's failure, in the phase under way.
func (r *run) fail(ctx context.Context, err error) {
	if cause := context.Cause(ctx); cause != nil && errors.Is(err, cause) {
		err = errors.Join(errors.New("cancelled during "+r.phase), cause)
	}
	code := classify(err)
	msg := r.scrub(err.Error())
	doc := map[string]any{"status": "failed", "rack_id": r.node.RackID, "node_id": r.node.ID, "phase": r.phase,
		"error_code": code.String(), "error_message": msg}
	_ = r.job.Fail(messages.Failure{Code: code, Description: "Failed during " + r.phase, Message: msg, ResultJSON: r.document(doc)})
}

// document renders doc, scrubbed.
func (r *run) document(doc map[string]any) string {
	b, err := json.Marshal(doc)
	if err != nil { // unreachable: documents hold strings and booleans
		return `{"status":"unknown"}`
	}
	return r.scrub(string(b))
}

// scrub hides every secret of the run (as given and base64-encoded, as
// NVUE receives passwords) that a device may have echoed into s.
func (r *run) scrub(s string) string {
	var forms []string
	for _, sec := range r.secrets {
		if !sec.IsZero() {
			forms = append(forms, sec.Reveal(), base64.StdEncoding.EncodeToString([]byte(sec.Reveal())))
		}
	}
	return hw.Scrub(s, forms...) // each also as JSON escapes it
}

// classify maps why a workflow stopped to the job error callers see.
func classify(err error) messages.JobError {
	switch {
	case errors.Is(err, errNotPrimary):
		return messages.ErrorFailedPrecondition
	case errors.Is(err, errCredentials), errors.Is(err, nvue.ErrUnauthorized), errors.Is(err, sshsftp.ErrAuth):
		return messages.ErrorUnauthenticated
	case errors.Is(err, errWaitTimeout), errors.Is(err, nvue.ErrTimeout), errors.Is(err, sshsftp.ErrTimeout),
		errors.Is(err, context.DeadlineExceeded):
		return messages.ErrorTimeout
	case errors.Is(err, hw.ErrUnsupported), errors.Is(err, nvue.ErrRequest) && !errors.Is(err, nvue.ErrActionFailed):
		return messages.ErrorInvalidArgument
	case errors.Is(err, nvue.ErrInvalidResponse):
		return messages.ErrorInvalidResponse
	case errors.Is(err, nvue.ErrServer):
		return messages.ErrorServerError
	case errors.Is(err, nvue.ErrTransport), errors.Is(err, sshsftp.ErrConnect), errors.Is(err, nvue.ErrNotFound):
		return messages.ErrorClientError
	default:
		return messages.ErrorOther
	}
}
