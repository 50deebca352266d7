package nvue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// actionBody builds {"@<verb>":{"state":"start","parameters":{...}}}.
func actionBody(verb string, params map[string]any) map[string]any {
	inner := map[string]any{"state": "start"}
	if params != nil {
		inner["parameters"] = params
	}
	return map[string]any{"@" + verb: inner}
}

// postAction POSTs an action and returns the action id from the answer.
func (c *Client) postAction(ctx context.Context, path, verb string, params map[string]any) (string, error) {
	raw, err := c.do(ctx, http.MethodPost, path, actionBody(verb, params), nil)
	if err != nil {
		return "", fmt.Errorf("nvue @%s %s: %w", verb, path, err)
	}
	id, ok := actionID(raw)
	if !ok {
		return "", fmt.Errorf("nvue @%s %s: %w: no action id in answer", verb, path, ErrInvalidResponse)
	}
	return id, nil
}

// actionID extracts an action id from a POST answer: a JSON string or
// number, an object with id|Id|action-id|actionId|job_id|JobId or whose
// @odata.id|href|location ends in the id, or a bare token.
func actionID(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		s := string(raw)
		if len(s) < 128 && !strings.ContainsAny(s, " \t\n{}<>") {
			return s, true
		}
		return "", false
	}
	if id, ok := scalarString(v); ok {
		return id, id != ""
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	for _, k := range []string{"id", "Id", "action-id", "actionId", "job_id", "JobId"} {
		if id, ok := scalarString(m[k]); ok && id != "" {
			return id, true
		}
	}
	for _, k := range []string{"@odata.id", "href", "location"} {
		if s, ok := m[k].(string); ok && strings.Trim(s, "/") != "" {
			parts := strings.Split(strings.TrimRight(s, "/"), "/")
			return parts[len(parts)-1], true
		}
	}
	return "", false
}

func scalarString(v any) (string, bool) {
	switch t := v.(type) {
	case string:
		return t, true
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64), true
	}
	return "", false
}

// Phase is the coarse outcome of an action.
type Phase int

// Action phases.
const (
	// PhaseRunning: still in progress.
	PhaseRunning Phase = iota
	// PhaseSucceeded: finished successfully.
	PhaseSucceeded
	// PhaseRebooting: handed off to a switch reboot (success so far; wait
	// for the switch to go down and come back).
	PhaseRebooting
	// PhaseFailed: finished unsuccessfully.
	PhaseFailed
)

// String names the phase.
func (p Phase) String() string {
	return [...]string{"running", "succeeded", "rebooting", "failed"}[p]
}

// ActionStatus is the answer of GET /nvue_v1/action/<id>.
type ActionStatus struct {
	ID         string
	State      string
	Status     string
	Detail     string
	Issues     []string
	Percent    int
	HTTPStatus int
}

// Message is the most specific failure or status text available.
func (a ActionStatus) Message() string {
	if len(a.Issues) > 0 {
		return strings.Join(a.Issues, "; ")
	}
	if a.Detail != "" {
		return a.Detail
	}
	return a.Status
}

func (a ActionStatus) text() string {
	return strings.ToLower(a.Status + " " + a.Detail + " " + strings.Join(a.Issues, " "))
}

// rebootWording reports text announcing that the switch goes offline.
func rebootWording(text string, powerCycleToo bool) bool {
	for _, w := range []string{"reboot", "system is offline", "disconnecting from nvos"} {
		if strings.Contains(text, w) {
			return true
		}
	}
	return powerCycleToo && strings.Contains(text, "power cycle")
}

// Phase classifies the status with upstream's rules: success states,
// action_error at 100 % or with reboot wording counts as done, reboot wording
// while running or on success means a reboot hand-off, failed/error states
// are failures.
func (a ActionStatus) Phase() Phase {
	state := strings.ToLower(a.State)
	text := a.text()
	switch state {
	case "action_success", "completed", "complete", "success":
		if rebootWording(text, false) {
			return PhaseRebooting
		}
		return PhaseSucceeded
	case "action_error":
		if rebootWording(text, true) {
			return PhaseRebooting
		}
		if a.Percent >= 100 {
			return PhaseSucceeded
		}
		return PhaseFailed
	case "", "start", "inactive", "running", "action_running":
		if rebootWording(text, false) {
			return PhaseRebooting
		}
		return PhaseRunning
	}
	return PhaseFailed
}

// Action reads the status of action id.
func (c *Client) Action(ctx context.Context, id string) (ActionStatus, error) {
	var m map[string]any
	if err := c.getJSON(ctx, "/nvue_v1/action/"+id, &m); err != nil {
		return ActionStatus{}, fmt.Errorf("read action %s: %w", id, err)
	}
	st := ActionStatus{ID: id}
	st.State, _ = m["state"].(string)
	st.Status, _ = m["status"].(string)
	st.Detail, _ = m["detail"].(string)
	for _, k := range []string{"percentage", "percent", "PercentComplete"} {
		if f, ok := m[k].(float64); ok {
			st.Percent = int(f)
			break
		}
	}
	if f, ok := m["http-status"].(float64); ok {
		st.HTTPStatus = int(f)
	}
	st.Issues = issueTexts(m["issue"])
	for i, s := range st.Issues {
		st.Issues[i] = c.redact(s)
	}
	return st, nil
}

// issueTexts flattens NVUE issue lists: strings, {message} or {data:{msg}},
// in a list or a map keyed by index.
func issueTexts(v any) []string {
	var items []any
	switch t := v.(type) {
	case []any:
		items = t
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			items = append(items, t[k])
		}
	case string:
		items = []any{t}
	}
	var out []string
	for _, it := range items {
		switch t := it.(type) {
		case string:
			out = append(out, t)
		case map[string]any:
			if s, ok := t["message"].(string); ok {
				out = append(out, s)
			} else if d, ok := t["data"].(map[string]any); ok {
				if s, ok := d["msg"].(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// WaitAction polls action id every PollInterval until it leaves
// PhaseRunning, for at most WaitTimeout (or ctx). Transport errors and 5xx
// answers are retried; other HTTP errors end the wait. It returns the last
// status: PhaseSucceeded and PhaseRebooting give a nil error, PhaseFailed an
// *ActionError (ErrActionFailed), running out of time ErrTimeout.
func (c *Client) WaitAction(ctx context.Context, id string) (ActionStatus, error) {
	return c.waitAction(ctx, id, c.opts.WaitTimeout)
}

// WaitActionFor is WaitAction with an explicit overall timeout (e.g. the
// 10 min of an NVOS image install).
func (c *Client) WaitActionFor(ctx context.Context, id string, timeout time.Duration) (ActionStatus, error) {
	return c.waitAction(ctx, id, timeout)
}

func (c *Client) waitAction(ctx context.Context, id string, timeout time.Duration) (ActionStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last ActionStatus
	var lastErr error
	err := poll(ctx, c.opts.PollInterval, func() (bool, error) {
		st, err := c.Action(ctx, id)
		if err != nil {
			if errors.Is(err, ErrTransport) || errors.Is(err, ErrServer) || errors.Is(err, ErrTimeout) {
				lastErr = err
				return false, nil
			}
			return true, err
		}
		last, lastErr = st, nil
		switch st.Phase() {
		case PhaseRunning:
			return false, nil
		case PhaseFailed:
			return true, &ActionError{Status: st}
		}
		return true, nil
	})
	if errors.Is(err, errPollTimeout) {
		if cerr := context.Cause(ctx); cerr != nil && !errors.Is(cerr, context.DeadlineExceeded) {
			return last, fmt.Errorf("wait for action %s: %w", id, cerr)
		}
		if lastErr != nil {
			return last, fmt.Errorf("wait for action %s: %w (last error: %v)", id, ErrTimeout, lastErr)
		}
		return last, fmt.Errorf("wait for action %s: %w (state=%s, %d%%)", id, ErrTimeout, last.State, last.Percent)
	}
	return last, err
}

// errPollTimeout marks the end of a poll window.
var errPollTimeout = errors.New("poll window elapsed")

// poll calls step at once and then every interval until it reports done or
// ctx ends (errPollTimeout).
func poll(ctx context.Context, interval time.Duration, step func() (bool, error)) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return errPollTimeout
		case <-t.C:
		}
		done, err := step()
		if done || err != nil {
			return err
		}
		t.Reset(interval)
	}
}
