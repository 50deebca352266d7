package rmsserver

import (
	"context"
	"errors"

	"google.golang.org/grpc/status"
)

// Failures logged elsewhere. In cluster mode the member that receives a
// call may have it served by the rack's owner (an interceptor in
// Options.Inner), which logs the call's failure with its cause: an
// in-band failure with its rack, node and holder job, a server-side error
// status with its message. The receiving member answers the caller with
// the owner's status and reason trailer as always, but logs those
// failures at debug only, marked logged_elsewhere, so that one failure is
// one warn line across the cluster.

// RecordLoggedReason is RecordReason for a reason that was logged already
// with its cause (by the member that served the call): it travels in the
// ReasonTrailer trailer as any other, and the Server logs it at debug.
func RecordLoggedReason(ctx context.Context, reason string) {
	if reason == "" {
		return
	}
	if f, ok := ctx.Value(failuresKey{}).(*inBandFailures); ok {
		f.add(inBandFailure{err: errors.New(reason), logged: true})
	}
}

// LoggedElsewhere marks err, a gRPC status that the member which served
// the call has logged with its cause: the caller gets the same status, and
// the Server's line for the RPC is at debug rather than warn. nil stays
// nil.
func LoggedElsewhere(err error) error {
	if err == nil {
		return nil
	}
	return loggedError{status.Convert(err)}
}

// loggedError is a status logged elsewhere.
type loggedError struct{ st *status.Status }

func (e loggedError) Error() string              { return e.st.Err().Error() }
func (e loggedError) GRPCStatus() *status.Status { return e.st }

// loggedElsewhere reports whether err was marked by LoggedElsewhere.
func loggedElsewhere(err error) bool {
	var l loggedError
	return errors.As(err, &l)
}
