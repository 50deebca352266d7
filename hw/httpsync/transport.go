package httpsync

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// ErrUnsupported is returned for a request this transport does not send:
// anything but a GET without a body over http or https.
var ErrUnsupported = errors.New("httpsync: only GET requests without a body are sent")

// Options configure a Transport. Zero fields take the defaults named.
type Options struct {
	// Dial opens the TCP connection (default: a net.Dialer with a 30 s
	// timeout).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLS is the configuration of https connections; its ServerName, when
	// empty, is the request's host.
	TLS *tls.Config
	// HandshakeTimeout bounds a TLS handshake (default 10 s).
	HandshakeTimeout time.Duration
	// MaxIdlePerHost caps the idle connections kept per host (default 2).
	MaxIdlePerHost int
	// MaxIdle caps the idle connections kept in all (default 65,536).
	MaxIdle int
	// IdleTimeout closes a connection idle for longer (default 90 s).
	IdleTimeout time.Duration
	// BufferSize is the size of the read and write buffers an exchange
	// borrows (default 512 bytes; longer lines are read in pieces).
	BufferSize int
}

func (o Options) withDefaults() Options {
	if o.Dial == nil {
		o.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	if o.TLS == nil {
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = 10 * time.Second
	}
	if o.MaxIdlePerHost <= 0 {
		o.MaxIdlePerHost = 2
	}
	if o.MaxIdle <= 0 {
		o.MaxIdle = 65536
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 90 * time.Second
	}
	if o.BufferSize <= 0 {
		o.BufferSize = 512
	}
	return o
}

// Transport is an http.RoundTripper for GET requests without a body. It is
// safe for concurrent use; make it with New.
type Transport struct {
	opts    Options
	idle    idlePool
	readers sync.Pool // of *bufio.Reader, detached
	writers sync.Pool // of *bufio.Writer, detached
}

// New returns a Transport.
func New(opts Options) *Transport {
	t := &Transport{opts: opts.withDefaults()}
	t.idle.init(t.opts.MaxIdlePerHost, t.opts.MaxIdle, t.opts.IdleTimeout)
	size := t.opts.BufferSize
	t.readers.New = func() any { return bufio.NewReaderSize(nil, size) }
	t.writers.New = func() any { return bufio.NewWriterSize(nil, size) }
	return t
}

// Supports reports whether r is a request this transport sends.
func Supports(r *http.Request) bool {
	return r.Method == http.MethodGet && (r.Body == nil || r.Body == http.NoBody) &&
		(r.URL.Scheme == "https" || r.URL.Scheme == "http") && r.Header.Get("Expect") == ""
}

// CloseIdleConnections closes every idle connection. Connections in use
// are closed, not kept, when their exchange ends.
func (t *Transport) CloseIdleConnections() { t.idle.closeAll() }

// IdleConnections reports how many connections are idle.
func (t *Transport) IdleConnections() int { return t.idle.count() }

// RoundTrip sends r on an idle connection to its host, or a new one, and
// reads the response's status and headers; the body is read from the
// connection as the caller reads it, and the connection is kept for the
// next request once the body has been read to its end and closed.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if !Supports(r) {
		if r.Body != nil {
			_ = r.Body.Close() // a RoundTripper closes the body, even on error
		}
		return nil, fmt.Errorf("%s %s: %w", r.Method, r.URL.Redacted(), ErrUnsupported)
	}
	ctx := r.Context()
	trace := httptrace.ContextClientTrace(ctx)
	addr := hostPort(r)
	for {
		c, reused := t.idle.take(addr)
		if c == nil {
			var err error
			if c, err = t.dial(ctx, trace, r.URL.Scheme, addr, r.URL.Hostname()); err != nil {
				return nil, err
			}
		}
		if trace != nil && trace.GotConn != nil {
			info := httptrace.GotConnInfo{Conn: c.nc, Reused: reused, WasIdle: reused}
			if reused {
				info.IdleTime = time.Since(c.idleAt)
			}
			trace.GotConn(info)
		}
		resp, err := t.exchange(ctx, trace, c, r)
		var unanswered *unansweredError
		if err != nil && reused && errors.As(err, &unanswered) && ctx.Err() == nil {
			continue // the host closed it while idle: once more on a new one
		}
		if unanswered != nil {
			err = unanswered.err
		}
		return resp, err
	}
}

// hostPort is the request's host with its port (the scheme's default when
// the URL names none).
func hostPort(r *http.Request) string {
	if port := r.URL.Port(); port != "" {
		return r.URL.Host
	}
	if r.URL.Scheme == "http" {
		return net.JoinHostPort(r.URL.Hostname(), "80")
	}
	return net.JoinHostPort(r.URL.Hostname(), "443")
}

// dial opens a connection to addr, with TLS for https. It tells trace
// (when not nil) of the connection and of the handshake, as net/http does.
func (t *Transport) dial(ctx context.Context, trace *httptrace.ClientTrace, scheme, addr, host string) (*conn, error) {
	if trace != nil && trace.ConnectStart != nil {
		trace.ConnectStart("tcp", addr)
	}
	nc, err := t.opts.Dial(ctx, "tcp", addr)
	if trace != nil && trace.ConnectDone != nil {
		trace.ConnectDone("tcp", addr, err)
	}
	if err != nil {
		return nil, err
	}
	if scheme == "http" {
		return &conn{nc: nc, addr: addr}, nil
	}
	cfg := t.opts.TLS
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	hctx, cancel := context.WithTimeout(ctx, t.opts.HandshakeTimeout)
	defer cancel()
	if trace != nil && trace.TLSHandshakeStart != nil {
		trace.TLSHandshakeStart()
	}
	err = tc.HandshakeContext(hctx)
	if trace != nil && trace.TLSHandshakeDone != nil {
		trace.TLSHandshakeDone(tc.ConnectionState(), err)
	}
	if err != nil {
		_ = nc.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("tls handshake with %s: %w", addr, err)
	}
	return &conn{nc: tc, addr: addr}, nil
}

// conn is one connection to addr; idle, it is only this.
type conn struct {
	nc     net.Conn
	addr   string
	idleAt time.Time
}

// unansweredError is a failure before any byte of the response arrived:
// the request may be sent again on another connection.
type unansweredError struct{ err error }

func (e *unansweredError) Error() string { return e.err.Error() }
func (e *unansweredError) Unwrap() error { return e.err }

// aLongTimeAgo is a deadline that has passed: setting it ends a blocked
// read or write at once.
var aLongTimeAgo = time.Unix(1, 0)

// exchange writes r on c and reads the response's head. From here on c
// belongs to the response's body (or is closed on failure).
func (t *Transport) exchange(ctx context.Context, trace *httptrace.ClientTrace, c *conn, r *http.Request) (*http.Response, error) {
	// A done context ends the exchange by ending its blocked read or write.
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(aLongTimeAgo) })
	fail := func(err error) error {
		stop()
		_ = c.nc.Close()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	w := t.writers.Get().(*bufio.Writer)
	w.Reset(c.nc)
	err := r.Write(w)
	if err == nil {
		err = w.Flush()
	}
	w.Reset(nil)
	t.writers.Put(w)
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{Err: err})
	}
	if err != nil {
		return nil, fail(&unansweredError{err: fmt.Errorf("write request: %w", err)})
	}
	br := t.readers.Get().(*bufio.Reader)
	br.Reset(c.nc)
	release := func() {
		br.Reset(nil)
		t.readers.Put(br)
	}
	if _, err := br.Peek(1); err != nil {
		release()
		return nil, fail(&unansweredError{err: fmt.Errorf("read response: %w", err)})
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	for {
		resp, err := http.ReadResponse(br, r)
		if err != nil {
			release()
			return nil, fail(fmt.Errorf("read response: %w", err))
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue // an interim answer: the final one follows
		}
		b := &body{ctx: ctx, t: t, c: c, br: br, rc: resp.Body, stop: stop, keep: !resp.Close && !r.Close && resp.StatusCode != http.StatusSwitchingProtocols}
		if resp.Body == http.NoBody {
			b.finish(true)
			return resp, nil
		}
		resp.Body = b
		return resp, nil
	}
}
