package rmsserver

import (
	"time"

	"google.golang.org/grpc/keepalive"
)

// UpstreamClientPingInterval is how often the upstream RMS client library
// sends HTTP/2 PINGs, with or without an active stream.
const UpstreamClientPingInterval = 10 * time.Second

// KeepalivePolicy derives the server's keepalive enforcement from the ping
// interval its clients use.
//
// grpc-go's default enforcement (at most one ping per 5 minutes, none without
// an active stream) answers such clients with GOAWAY too_many_pings and drops
// the connection. We allow pings at half the client interval, so scheduling
// jitter never counts as a strike, and we allow them without streams.
type KeepalivePolicy struct {
	ClientPingInterval time.Duration
}

// DefaultKeepalive accepts the upstream client.
func DefaultKeepalive() KeepalivePolicy {
	return KeepalivePolicy{ClientPingInterval: UpstreamClientPingInterval}
}

// Enforcement is the grpc-go enforcement policy for p.
func (p KeepalivePolicy) Enforcement() keepalive.EnforcementPolicy {
	return keepalive.EnforcementPolicy{
		MinTime:             p.ClientPingInterval / 2,
		PermitWithoutStream: true,
	}
}

// Parameters makes the server probe idle connections itself, at three times
// the client interval, and drop a peer that does not answer a PING in twice
// the interval.
func (p KeepalivePolicy) Parameters() keepalive.ServerParameters {
	return keepalive.ServerParameters{
		Time:    3 * p.ClientPingInterval,
		Timeout: 2 * p.ClientPingInterval,
	}
}
