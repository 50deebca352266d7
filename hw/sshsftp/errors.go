package sshsftp

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error of the package wraps one of them (remote
// file-system errors also match os.ErrNotExist / os.ErrPermission).
var (
	// ErrNoHostKeyPolicy: Options.HostKey was left at its zero value.
	ErrNoHostKeyPolicy = errors.New("sshsftp: no host key policy configured")
	// ErrHostKey: the server's host key does not match the policy.
	ErrHostKey = errors.New("sshsftp: host key rejected")
	// ErrAuth: the server rejected the credentials.
	ErrAuth = errors.New("sshsftp: authentication failed")
	// ErrConnect: TCP connect or SSH handshake failed.
	ErrConnect = errors.New("sshsftp: connection failed")
	// ErrTimeout: an operation ran out of time.
	ErrTimeout = errors.New("sshsftp: timeout")
	// ErrStalled: an SFTP transfer step made no progress within the step
	// timeout (also matches ErrTimeout).
	ErrStalled = errors.New("sshsftp: transfer stalled")
	// ErrExit: a remote command failed (see *ExitError).
	ErrExit = errors.New("sshsftp: remote command failed")
	// ErrSFTP: an SFTP operation failed.
	ErrSFTP = errors.New("sshsftp: sftp error")
	// ErrClosed: the client was closed (or broken by a timeout).
	ErrClosed = errors.New("sshsftp: client closed")
)

// ExitError is a remote command that ended with a non-zero status, a
// signal or no status at all. It matches ErrExit.
type ExitError struct {
	Command string
	Code    int    // exit status; -1 when the command gave none
	Signal  string // set when the command was killed by a signal
	Stderr  string // the last bytes of standard error, trimmed
}

// Error names the command, how it ended and the end of its stderr.
func (e *ExitError) Error() string {
	var msg string
	switch {
	case e.Signal != "":
		msg = fmt.Sprintf("remote command %q killed by signal %s", e.Command, e.Signal)
	case e.Code < 0:
		msg = fmt.Sprintf("remote command %q ended without exit status", e.Command)
	default:
		msg = fmt.Sprintf("remote command %q exited with status %d", e.Command, e.Code)
	}
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	return msg
}

// Is matches ErrExit.
func (e *ExitError) Is(target error) bool { return target == ErrExit }
