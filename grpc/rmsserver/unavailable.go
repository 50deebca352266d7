package rmsserver

import (
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// errUnavailable answers an RPC whose dependency the server was built
// without (a test server, or a daemon still wiring a subsystem).
func errUnavailable(what string) error {
	return status.Errorf(codes.Unavailable, "%s is not available on this server", what)
}
