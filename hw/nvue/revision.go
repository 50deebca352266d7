package nvue

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// Revision states that end a wait.
const (
	RevisionApplied = "applied"
	noConfigDiff    = "config apply executed with no config diff"
)

// revisionStateBody builds the body that moves a revision to state
// ("apply" or "save"), answering NVUE's "are you sure" prompt.
func revisionStateBody(state string) map[string]any {
	return map[string]any{"state": state, "auto-prompt": map[string]any{"ays": "ays_yes"}}
}

// CreateRevision opens a new configuration revision and returns its id.
func (c *Client) CreateRevision(ctx context.Context) (string, error) {
	raw, err := c.do(ctx, http.MethodPost, "/nvue_v1/revision", map[string]any{}, nil)
	if err != nil {
		return "", fmt.Errorf("create revision: %w", err)
	}
	if id, ok := revisionID(raw); ok {
		return id, nil
	}
	return "", fmt.Errorf("create revision: %w: no revision id in answer", ErrInvalidResponse)
}

// revisionID reads a string, a number, {"revision-id"|"id": ...} or a
// one-key map {"<rev>": {...}}.
func revisionID(raw []byte) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	if s, ok := scalarString(v); ok {
		return s, s != ""
	}
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	for _, k := range []string{"revision-id", "id"} {
		if s, ok := scalarString(m[k]); ok && s != "" {
			return s, true
		}
	}
	if len(m) == 1 {
		for k := range m {
			return k, true
		}
	}
	return "", false
}

// Patch stages body at path (e.g. "/nvue_v1/system/api") in revision rev.
func (c *Client) Patch(ctx context.Context, rev, path string, body any) error {
	if _, err := c.do(ctx, http.MethodPatch, path+"?rev="+url.QueryEscape(rev), body, nil); err != nil {
		return fmt.Errorf("stage %s in revision %s: %w", path, rev, err)
	}
	return nil
}

// StagePassword stages a new password for an NVOS user in revision rev
// (sent base64-encoded, as RMS does). User names are ASCII letters/digits.
func (c *Client) StagePassword(ctx context.Context, rev, user string, password hw.Secret) error {
	if !validUser(user) {
		return fmt.Errorf("stage password: %w: user name must be ASCII letters and digits", ErrRequest)
	}
	body := map[string]any{"password": base64.StdEncoding.EncodeToString([]byte(password.Reveal()))}
	if _, err := c.do(ctx, http.MethodPatch, "/nvue_v1/system/aaa/user/"+user+"?rev="+url.QueryEscape(rev), body, nil); err != nil {
		return fmt.Errorf("stage password of %s in revision %s: %w", user, rev, redactErr(err, password))
	}
	return nil
}

func validUser(u string) bool {
	if u == "" {
		return false
	}
	for _, r := range u {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// redactErr hides a password (plain or base64) that a server echoed into
// an error's detail.
func redactErr(err error, pw hw.Secret) error {
	var he *HTTPError
	if pw.IsZero() || !errors.As(err, &he) {
		return err
	}
	cp := *he
	cp.Detail = hw.Scrub(cp.Detail, pw.Reveal(), base64.StdEncoding.EncodeToString([]byte(pw.Reveal())))
	return &cp
}

// ApplyRevision asks the switch to apply revision rev.
func (c *Client) ApplyRevision(ctx context.Context, rev string) error {
	if _, err := c.do(ctx, http.MethodPatch, "/nvue_v1/revision/"+url.PathEscape(rev), revisionStateBody("apply"), nil); err != nil {
		return fmt.Errorf("apply revision %s: %w", rev, err)
	}
	return nil
}

// RevisionStatus is GET /nvue_v1/revision/<rev>.
type RevisionStatus struct {
	State  string
	Issues []string
}

// Revision reads the state of revision rev (flat or keyed by rev).
func (c *Client) Revision(ctx context.Context, rev string) (RevisionStatus, error) {
	var m map[string]any
	if err := c.getJSON(ctx, "/nvue_v1/revision/"+url.PathEscape(rev), &m); err != nil {
		return RevisionStatus{}, fmt.Errorf("read revision %s: %w", rev, err)
	}
	if inner, ok := m[rev].(map[string]any); ok {
		m = inner
	}
	st := RevisionStatus{}
	st.State, _ = m["state"].(string)
	if tr, ok := m["transition"].(map[string]any); ok {
		st.Issues = issueTexts(tr["issue"])
	}
	if st.State == "" {
		return st, fmt.Errorf("read revision %s: %w: no state", rev, ErrInvalidResponse)
	}
	return st, nil
}

// outcome classifies a revision state: done, failed or still going.
func (s RevisionStatus) outcome() (done bool, err error) {
	switch strings.ToLower(s.State) {
	case RevisionApplied:
		return true, nil
	case "failed", "error", "invalid":
		for _, is := range s.Issues {
			if strings.Contains(is, noConfigDiff) {
				return true, nil
			}
		}
		return true, &RevisionError{State: s.State, Issues: s.Issues}
	}
	return false, nil
}

// WaitRevision polls revision rev every PollInterval for at most
// WaitTimeout until it is applied (nil; also when the switch reports the
// apply had no config diff), failed (*RevisionError) or time runs out
// (ErrTimeout). Transport errors and 5xx are retried.
func (c *Client) WaitRevision(ctx context.Context, rev string) error {
	return c.waitRevision(ctx, rev, nil)
}

// waitRevision polls with c. When fallback is set (c logs in with a
// password that only becomes valid once the revision applies), 401 and
// transport errors are tolerated, and fallback's view of the revision is
// used only to surface a terminal failure: an "applied" seen with the old
// credentials is not accepted.
func (c *Client) waitRevision(ctx context.Context, rev string, fallback *Client) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.WaitTimeout)
	defer cancel()
	var last RevisionStatus
	var lastErr error
	err := poll(ctx, c.opts.PollInterval, func() (bool, error) {
		st, err := c.Revision(ctx, rev)
		if err != nil {
			if fallback != nil && errors.Is(err, ErrUnauthorized) {
				if old, oerr := fallback.Revision(ctx, rev); oerr == nil {
					if _, ferr := old.outcome(); ferr != nil {
						var re *RevisionError
						if errors.As(ferr, &re) {
							re.Revision = rev
						}
						return true, ferr
					}
				}
				lastErr = err
				return false, nil
			}
			if errors.Is(err, ErrTransport) || errors.Is(err, ErrServer) || errors.Is(err, ErrTimeout) {
				lastErr = err
				return false, nil
			}
			return true, err
		}
		last, lastErr = st, nil
		done, err := st.outcome()
		var re *RevisionError
		if errors.As(err, &re) {
			re.Revision = rev
		}
		return done, err
	})
	if errors.Is(err, errPollTimeout) {
		if lastErr != nil {
			return fmt.Errorf("wait for revision %s: %w (last error: %v)", rev, ErrTimeout, lastErr)
		}
		return fmt.Errorf("wait for revision %s: %w (state=%s)", rev, ErrTimeout, last.State)
	}
	return err
}

// SaveConfig persists the running configuration: PATCH
// /nvue_v1/revision/applied with the save body, falling back to the same
// body on /nvue_v1/revision/<rev> when rev is not empty.
func (c *Client) SaveConfig(ctx context.Context, rev string) error {
	_, err := c.do(ctx, http.MethodPatch, "/nvue_v1/revision/applied", revisionStateBody("save"), nil)
	if err == nil {
		return nil
	}
	if rev == "" || errors.Is(err, ErrUnauthorized) {
		return fmt.Errorf("save config: %w", err)
	}
	if _, err2 := c.do(ctx, http.MethodPatch, "/nvue_v1/revision/"+url.PathEscape(rev), revisionStateBody("save"), nil); err2 != nil {
		return fmt.Errorf("save config (revision %s after %v): %w", rev, err, err2)
	}
	return nil
}

// DeleteRevision discards revision rev.
func (c *Client) DeleteRevision(ctx context.Context, rev string) error {
	if _, err := c.do(ctx, http.MethodDelete, "/nvue_v1/revision/"+url.PathEscape(rev), nil, nil); err != nil {
		return fmt.Errorf("delete revision %s: %w", rev, err)
	}
	return nil
}

// ChangePassword runs the rotation flow for an NVOS user: create a
// revision, stage the new password, apply, wait, save. When user is the
// client's own login, the wait polls with the new password (401 and
// transport errors are tolerated during the hand-off) and the returned
// client carries the new credentials; otherwise it returns c. A revision
// that was not applied is deleted.
func (c *Client) ChangePassword(ctx context.Context, user string, password hw.Secret) (*Client, error) {
	rev, err := c.CreateRevision(ctx)
	if err != nil {
		return nil, fmt.Errorf("change password of %s: %w", user, err)
	}
	applied := false
	defer func() {
		if !applied {
			// Best effort clean-up of a revision that never applied; the
			// change's own error is what the caller needs.
			_ = c.DeleteRevision(context.WithoutCancel(ctx), rev)
		}
	}()
	if err := c.StagePassword(ctx, rev, user, password); err != nil {
		return nil, fmt.Errorf("change password of %s: %w", user, err)
	}
	if err := c.ApplyRevision(ctx, rev); err != nil {
		return nil, fmt.Errorf("change password of %s: %w", user, redactErr(err, password))
	}
	applied = true
	poller := c
	own := user == c.ep.Credentials.Username
	if own {
		if poller, err = c.WithCredentials(hw.Credentials{Username: user, Password: password}); err != nil {
			return nil, err
		}
	}
	var fallback *Client
	if own {
		fallback = c
	}
	if err := poller.waitRevision(ctx, rev, fallback); err != nil {
		if own {
			poller.Close()
		}
		return nil, fmt.Errorf("change password of %s: %w", user, err)
	}
	if err := poller.SaveConfig(ctx, rev); err != nil {
		if own {
			poller.Close()
		}
		return nil, fmt.Errorf("change password of %s: %w", user, err)
	}
	return poller, nil
}
