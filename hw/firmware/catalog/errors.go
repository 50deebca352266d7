package catalog

import (
	"errors"
	"fmt"
)

// Sentinels the callers tell apart with errors.Is; the gRPC edge maps them
// to status codes. Anything else is a failure of the store or the file
// system.
var (
	// ErrInvalid: the request cannot be accepted as it is (a manifest
	// refused by manifest.Parse, which the error also matches, an artifact
	// that cannot be fetched, an unusable access token).
	ErrInvalid = errors.New("catalog: invalid request")
	// ErrNotFound: no firmware object has the id asked for.
	ErrNotFound = errors.New("catalog: firmware object not found")
	// ErrExists: a firmware object with the manifest's id is already in
	// the catalog.
	ErrExists = errors.New("catalog: firmware object already exists")
	// ErrClosed: the service is closed (rmsd is shutting down).
	ErrClosed = errors.New("catalog: closed")
)

// Error is a refusal whose message is written for the caller. It matches
// its Kind (one of the sentinels) and wraps its cause.
type Error struct {
	Kind error
	Msg  string
	Err  error
}

func (e *Error) Error() string { return e.Msg }

// Is matches the refusal's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// invalid refuses a request because of err, whose message is the caller's.
func invalid(err error) error { return &Error{Kind: ErrInvalid, Msg: err.Error(), Err: err} }

// invalidf refuses a request with a message of its own.
func invalidf(format string, args ...any) error {
	return &Error{Kind: ErrInvalid, Msg: fmt.Sprintf(format, args...)}
}

func notFound(id string, cause error) error {
	return &Error{Kind: ErrNotFound, Msg: fmt.Sprintf("firmware object %q not found", id), Err: cause}
}

// errDeleted says why a download stopped when its object was deleted
// (ErrClosed when the service closed).
var errDeleted = errors.New("catalog: the firmware object was deleted")
