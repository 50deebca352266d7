package nvue

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors; every error returned by the client wraps one of them.
var (
	// ErrUnauthorized: the switch answered 401 (wrong credentials).
	ErrUnauthorized = errors.New("nvue: unauthorized")
	// ErrPasswordExpired: a 401 whose body says the password expired; it
	// also matches ErrUnauthorized.
	ErrPasswordExpired = errors.New("nvue: password expired")
	// ErrNotFound: the resource does not exist (404).
	ErrNotFound = errors.New("nvue: not found")
	// ErrTransport: connection refused, reset, TLS failure, DNS...
	ErrTransport = errors.New("nvue: transport error")
	// ErrServer: the switch answered 5xx.
	ErrServer = errors.New("nvue: server error")
	// ErrRequest: the switch rejected the request (4xx other than 401/404).
	ErrRequest = errors.New("nvue: request rejected")
	// ErrTimeout: a request or a wait ran out of time.
	ErrTimeout = errors.New("nvue: timeout")
	// ErrInvalidResponse: a 2xx answer that could not be understood.
	ErrInvalidResponse = errors.New("nvue: invalid response")
	// ErrActionFailed: an NVUE action ended in failure.
	ErrActionFailed = errors.New("nvue: action failed")
	// ErrRevisionFailed: a configuration revision failed to apply.
	ErrRevisionFailed = errors.New("nvue: revision apply failed")
)

// HTTPError is a non-2xx answer. It matches ErrUnauthorized (401),
// ErrPasswordExpired (401 mentioning an expired password), ErrNotFound
// (404), ErrServer (5xx) or ErrRequest (other 4xx) with errors.Is.
type HTTPError struct {
	Method string
	Path   string
	Status int
	Detail string // server's message, bounded and free of secrets
}

// Error formats the failed request like upstream: "HTTP <METHOD> <path> returned <status>".
func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("HTTP %s %s returned %d", e.Method, e.Path, e.Status)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Is maps the status to the package sentinels.
func (e *HTTPError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrPasswordExpired:
		return e.Status == http.StatusUnauthorized && strings.Contains(strings.ToLower(e.Detail), "expired")
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrServer:
		return e.Status >= 500
	case ErrRequest:
		return e.Status >= 400 && e.Status < 500 && e.Status != http.StatusUnauthorized && e.Status != http.StatusNotFound
	}
	return false
}

// ActionError reports an action that ended in failure; it matches
// ErrActionFailed.
type ActionError struct {
	Status ActionStatus
}

// Error names the action, its final state and its issue text.
func (e *ActionError) Error() string {
	msg := fmt.Sprintf("nvue action %s failed: state=%s", e.Status.ID, e.Status.State)
	if m := e.Status.Message(); m != "" {
		msg += ": " + m
	}
	return msg
}

// Is matches ErrActionFailed.
func (e *ActionError) Is(target error) bool { return target == ErrActionFailed }

// RevisionError reports a revision that failed to apply; it matches
// ErrRevisionFailed.
type RevisionError struct {
	Revision string
	State    string
	Issues   []string
}

// Error names the revision, its state and its issues.
func (e *RevisionError) Error() string {
	msg := fmt.Sprintf("revision %s apply failed (state=%s)", e.Revision, e.State)
	if len(e.Issues) > 0 {
		msg += ": " + strings.Join(e.Issues, "; ")
	}
	return msg
}

// Is matches ErrRevisionFailed.
func (e *RevisionError) Is(target error) bool { return target == ErrRevisionFailed }
