package racks

import (
	"errors"
	"fmt"
)

// Sentinel errors: every error of the registry wraps one of them (test
// with errors.Is).
var (
	ErrRackNotFound = errors.New("racks: rack not found")
	ErrNodeNotFound = errors.New("racks: node not found")
	ErrInvalidNode  = errors.New("racks: invalid node")
	ErrConflict     = errors.New("racks: conflicting registration")
	// ErrUnavailable: the change could not be persisted, so it was not made.
	ErrUnavailable = errors.New("racks: node store unavailable")
)

// Error is a refusal of the registry. Its text is written for the caller
// who sent the node (the gRPC edge shows it in-band as it is), so it does
// not repeat the sentinel; Unwrap returns the sentinel.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the sentinel the refusal is an instance of.
func (e *Error) Unwrap() error { return e.Kind }

func refuse(kind error, format string, args ...any) error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

func rackNotFound(rackID string) error { return refuse(ErrRackNotFound, "rack not found: %s", rackID) }

func nodeNotFound(rackID, nodeID string) error {
	return refuse(ErrNodeNotFound, "node %s not found in rack %s", nodeID, rackID)
}
