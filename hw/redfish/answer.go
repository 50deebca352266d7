package redfish

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"sync/atomic"
)

// ErrNoAnswer marks a liveness probe that ran out of time before anything
// at the BMC's address answered: no TCP connection, or one on which the
// TLS handshake never got a reply. That is what a BMC without power looks
// like. A refused connection (a reset is an answer), a DNS failure (the
// resolver, not the BMC, failed), a TLS failure or any HTTP status are not
// ErrNoAnswer. It comes with ErrTimeout.
var ErrNoAnswer = errors.New("redfish: no answer")

// answerTrace records whether the BMC answered during one request: a TLS
// handshake completed, or a kept-alive connection was used.
type answerTrace struct{ answered atomic.Bool }

// with returns ctx carrying a client trace that feeds t.
func (t *answerTrace) with(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if info.Reused {
				t.answered.Store(true)
			}
		},
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err == nil {
				t.answered.Store(true)
			}
		},
	})
}

// classify adds ErrNoAnswer to a probe's err when the probe timed out with
// nothing answered and no name to resolve at fault.
func (t *answerTrace) classify(err error) error {
	var dns *net.DNSError
	if err == nil || t.answered.Load() || !errors.Is(err, ErrTimeout) || errors.As(err, &dns) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrNoAnswer, err)
}
