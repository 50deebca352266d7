package store

import "errors"

// Sentinel errors. Engine errors wrap them with the id concerned; test with
// errors.Is.
var (
	// ErrNotFound: no firmware object (or artifact) has the id asked for.
	ErrNotFound = errors.New("store: not found")
	// ErrExists: a firmware object with that id is already stored.
	ErrExists = errors.New("store: already exists")
	// ErrInvalid: the caller's value breaks a rule documented on its type;
	// nothing was written.
	ErrInvalid = errors.New("store: invalid value")
	// ErrUnavailable: the database did not answer within the store's own
	// deadline for the call (a stalled server or network); nothing is
	// known to have been written.
	ErrUnavailable = errors.New("store: unavailable")
)
