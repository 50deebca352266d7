package ctl

import (
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Exit codes of rmsctl.
const (
	// ExitOK: the command did what it was asked; a watched job completed.
	ExitOK = 0
	// ExitFailed: rmsd answered with an in-band FAILURE, or a watched job
	// failed.
	ExitFailed = 1
	// ExitUsage: bad flags, arguments, config or input file; nothing was
	// sent.
	ExitUsage = 2
	// ExitUnreachable: rmsd could not be reached or did not answer in time.
	ExitUnreachable = 3
	// ExitNotFound: rmsd does not know the job, object, rack or node
	// (gRPC NOT_FOUND).
	ExitNotFound = 4
	// ExitRefused: rmsd refused the request with another gRPC error
	// (INVALID_ARGUMENT, ALREADY_EXISTS, FAILED_PRECONDITION, ...).
	ExitRefused = 5
	// ExitDenied: rmsd's [authz] does not grant the client certificate
	// the RPC's permission (gRPC PERMISSION_DENIED).
	ExitDenied = 6
	// ExitInterrupted: SIGINT or SIGTERM stopped rmsctl while it waited.
	ExitInterrupted = 130
)

// exitError is an error that carries the exit code it ends rmsctl with.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError is a mistake in what the user typed or gave as input.
func usageError(format string, args ...any) error {
	return &exitError{code: ExitUsage, err: fmt.Errorf(format, args...)}
}

// failed is an in-band FAILURE or a failed job.
func failed(format string, args ...any) error {
	return &exitError{code: ExitFailed, err: fmt.Errorf(format, args...)}
}

// rpcError names the RPC and classifies a gRPC error by exit code.
func rpcError(a *app, rpc string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return &exitError{code: ExitUnreachable, err: fmt.Errorf("%s: %w", rpc, err)}
	}
	switch st.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return &exitError{code: ExitUnreachable,
			err: fmt.Errorf("%s: rmsd at %s unreachable (%s): %s", rpc, a.target.Addr, st.Code(), st.Message())}
	case codes.NotFound:
		return &exitError{code: ExitNotFound, err: fmt.Errorf("%s: %s", rpc, st.Message())}
	case codes.PermissionDenied:
		return &exitError{code: ExitDenied, err: fmt.Errorf("%s: permission denied: %s", rpc, st.Message())}
	default:
		return &exitError{code: ExitRefused, err: fmt.Errorf("%s: %s: %s", rpc, st.Code(), st.Message())}
	}
}

// exitCode is the exit code err ends rmsctl with.
func exitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return ExitUsage // cobra's own errors: unknown commands and flags
}
