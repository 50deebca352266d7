package hw

import (
	"context"
	"net/http"
	"time"
)

// RequestSample is one southbound HTTP exchange as an observer sees it. It
// names no device, URL or holder: observers count by protocol and kind.
type RequestSample struct {
	// Protocol is the client's protocol: "redfish" or "nvue".
	Protocol string
	// Kind is the kind of device the request was sent to.
	Kind Kind
	// Elapsed runs from the request being handed to the transport until
	// its response headers arrived or it failed (the body is not waited
	// for: a firmware download's transfer is not a device's latency).
	Elapsed time.Duration
	// Status is the response's HTTP status, 0 when there was none.
	Status int
	// Err is the transport's error (refused, reset, TLS, timeout), nil
	// when a response arrived whatever its status.
	Err error
}

// RequestObserver is told of every southbound HTTP exchange. It runs on
// the requesting goroutine, so it must be cheap: count, don't wait.
type RequestObserver func(RequestSample)

type deviceKindKey struct{}

// WithDeviceKind returns ctx naming kind as the kind of device the
// requests made under it go to. KindUnknown leaves ctx as it is.
func WithDeviceKind(ctx context.Context, kind Kind) context.Context {
	if kind == KindUnknown {
		return ctx
	}
	return context.WithValue(ctx, deviceKindKey{}, kind)
}

// DeviceKindOf returns the kind WithDeviceKind put on ctx, or KindUnknown.
func DeviceKindOf(ctx context.Context) Kind {
	k, _ := ctx.Value(deviceKindKey{}).(Kind)
	return k
}

// ObservedTransport wraps base so that observe is told of every exchange
// it carries, as protocol, to the device kind the request's context names
// (fallback when it names none). A nil observe returns base unwrapped.
func ObservedTransport(base http.RoundTripper, protocol string, fallback Kind, observe RequestObserver) http.RoundTripper {
	if observe == nil {
		return base
	}
	return observedTransport{base: base, protocol: protocol, fallback: fallback, observe: observe}
}

type observedTransport struct {
	base     http.RoundTripper
	protocol string
	fallback Kind
	observe  RequestObserver
}

func (t observedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	kind := DeviceKindOf(r.Context())
	if kind == KindUnknown {
		kind = t.fallback
	}
	began := time.Now()
	resp, err := t.base.RoundTrip(r)
	s := RequestSample{Protocol: t.protocol, Kind: kind, Elapsed: time.Since(began), Err: err}
	if resp != nil {
		s.Status = resp.StatusCode
	}
	t.observe(s)
	return resp, err
}

// CloseIdleConnections passes on to base (see holderTransport's).
func (t observedTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
