package redfish

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error returned by a Client wraps exactly one of them
// (test with errors.Is) so callers can map it to a job error code.
var (
	// ErrUnauthenticated means the BMC answered 401: wrong user or password.
	ErrUnauthenticated = errors.New("redfish: unauthenticated")
	// ErrForbidden means the BMC answered 403.
	ErrForbidden = errors.New("redfish: forbidden")
	// ErrNotFound means the BMC answered 404, or a resource the operation
	// needs is not advertised.
	ErrNotFound = errors.New("redfish: not found")
	// ErrConflict means the BMC answered 409 (already exists / already done).
	ErrConflict = errors.New("redfish: conflict")
	// ErrClient means any other 4xx answer: the request was refused.
	ErrClient = errors.New("redfish: request rejected")
	// ErrUnavailable means 502, 503 or 504: the BMC is up but not serving.
	ErrUnavailable = errors.New("redfish: service unavailable")
	// ErrServer means any other 5xx answer.
	ErrServer = errors.New("redfish: server error")
	// ErrUnreachable means the BMC could not be connected to (refused,
	// no route, DNS failure, no answer to the connection attempt). A BMC
	// that answers wrongly (401, a TLS failure, a slow reply) is reachable.
	// Only ErrNoAnswer (a probe nothing answered) says no powered BMC is
	// there: a refusal comes from a powered network stack.
	ErrUnreachable = errors.New("redfish: unreachable")
	// ErrTransport means the connection failed after it was made (reset,
	// TLS failure, truncated answer).
	ErrTransport = errors.New("redfish: transport error")
	// ErrTimeout means a connect, request, upload, task or liveness
	// deadline passed.
	ErrTimeout = errors.New("redfish: timeout")
	// ErrInvalidResponse means the BMC answered 2xx with something that is
	// not the expected Redfish resource.
	ErrInvalidResponse = errors.New("redfish: invalid response")
	// ErrActionUnavailable means the resource does not advertise the action
	// the operation needs, or the action refuses the requested value.
	ErrActionUnavailable = errors.New("redfish: action not available")
	// ErrPrecondition means the device is not in a state to accept the
	// operation (write protection, background copy, an update running).
	ErrPrecondition = errors.New("redfish: precondition failed")
	// ErrTaskFailed means a firmware task ended in Exception, Cancelled or a
	// critical status.
	ErrTaskFailed = errors.New("redfish: task failed")
)

// HTTPError describes a non-2xx answer. It unwraps to the sentinel for its
// status code. It never carries credentials: the URL has no user info.
type HTTPError struct {
	Method     string
	URL        string
	StatusCode int
	// Message is the Redfish error message from the body, if any (clipped).
	Message string
}

// Error describes the request and status; it never includes credentials.
func (e *HTTPError) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.URL, e.StatusCode, e.Message)
	}
	return fmt.Sprintf("%s %s: HTTP %d", e.Method, e.URL, e.StatusCode)
}

// Unwrap returns the sentinel matching the status code.
func (e *HTTPError) Unwrap() error { return statusSentinel(e.StatusCode) }

func statusSentinel(code int) error {
	switch {
	case code == 401:
		return ErrUnauthenticated
	case code == 403:
		return ErrForbidden
	case code == 404:
		return ErrNotFound
	case code == 408:
		return ErrTimeout
	case code == 409:
		return ErrConflict
	case code == 502, code == 503, code == 504:
		return ErrUnavailable
	case code >= 500:
		return ErrServer
	default:
		return ErrClient
	}
}

// TaskError reports a firmware task that ended unsuccessfully.
type TaskError struct {
	Task Task
}

// Error describes how the task ended.
func (e *TaskError) Error() string {
	return fmt.Sprintf("task %s ended unsuccessfully: state=%s, status=%s, message=%s",
		e.Task.ID, e.Task.RawState, e.Task.Status, e.Task.Message)
}

// Unwrap returns ErrTaskFailed.
func (e *TaskError) Unwrap() error { return ErrTaskFailed }

// isTransport reports whether err is a connection-level failure.
func isTransport(err error) bool {
	return errors.Is(err, ErrTransport) || errors.Is(err, ErrUnreachable) || errors.Is(err, ErrTimeout)
}
