package nvue

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmsd/rmsd/hw"
)

// Pool owns the HTTP transport and TLS policy shared by every Client made
// from it: a connection to a switch stays open between operations and is
// reused by the next client of the same switch, so a switch pays one TLS
// handshake rather than one per operation. Make one per process and Close
// it on shutdown.
type Pool struct {
	opts      Options
	tls       *tls.Config
	transport *http.Transport
	http      *http.Client
	// bootstrap is the unverified fallback client (bootstrap.go), nil
	// unless Options.BootstrapFallback applies.
	bootstrap    *http.Client
	bootstrapped atomic.Int64
	warned       sync.Map // switch base URL -> struct{}: fallback logged
}

// NewPool builds a pool; the zero Options are upstream's defaults.
func NewPool(opts Options) (*Pool, error) {
	opts = opts.withDefaults()
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch opts.TLS {
	case TLSInsecure:
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // upstream insecure-switch policy, explicit in Options
	case TLSVerify:
		tlsCfg.RootCAs = opts.RootCAs
	default:
		return nil, fmt.Errorf("nvue pool: %w: unknown TLS mode %d", ErrRequest, opts.TLS)
	}
	if opts.ClientCertificate != nil {
		tlsCfg.Certificates = []tls.Certificate{*opts.ClientCertificate}
	}
	p := &Pool{opts: opts, tls: tlsCfg}
	p.transport = &http.Transport{
		Proxy:               nil,
		DialTLSContext:      p.dialTLS,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
		ForceAttemptHTTP2:   false,
	}
	p.http = &http.Client{Transport: hw.HolderTransport(p.observed(p.transport))}
	if opts.BootstrapFallback && opts.TLS == TLSVerify {
		p.bootstrap = p.newBootstrapClient()
	}
	return p, nil
}

// observed wraps t so that Options.Observe sees its requests, sent to
// switches.
func (p *Pool) observed(t http.RoundTripper) http.RoundTripper {
	return hw.ObservedTransport(t, "nvue", hw.KindSwitch, p.opts.Observe)
}

// Close drops every idle connection. Clients made from the pool must not be
// used afterwards.
func (p *Pool) Close() {
	p.transport.CloseIdleConnections()
	if p.bootstrap != nil {
		p.bootstrap.CloseIdleConnections()
	}
}

// Client returns a client for the switch's host endpoint (IP, optional host
// name sent as Host and checked as TLS name, port: 0 or 22 mean
// Options.Port, credentials). Its Close releases nothing: the pool keeps
// the connections for the next client.
func (p *Pool) Client(ep hw.Endpoint) (*Client, error) {
	if ep.Host() == "" {
		return nil, fmt.Errorf("nvue client: %w: endpoint has no IP or host name", ErrRequest)
	}
	port := strconv.Itoa(p.opts.port(ep))
	c := &Client{
		pool: p, ep: ep, opts: p.opts, log: p.opts.Logger,
		// The URL names the address TCP goes to, so connections are pooled
		// per switch address.
		base:    "https://" + net.JoinHostPort(ep.Host(), port),
		tlsName: ep.Host(),
	}
	if ep.HostName != "" {
		c.tlsName = ep.HostName
		if ep.IP != "" {
			c.host = net.JoinHostPort(ep.HostName, port)
		}
	}
	return c, nil
}

// tlsNameKey carries a request's TLS server name to dialTLS (a dial keeps
// the values of the request context that caused it).
type tlsNameKey struct{}

func withTLSName(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, tlsNameKey{}, name)
}

// dialTLS connects to addr (the switch address of the URL) and completes
// the TLS handshake for the server name of the request, within the connect
// timeout.
func (p *Pool) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	cfg := p.tls.Clone()
	if name, _ := ctx.Value(tlsNameKey{}).(string); name != "" {
		cfg.ServerName = name
	} else if host, _, err := net.SplitHostPort(addr); err == nil {
		cfg.ServerName = host
	}
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: p.opts.ConnectTimeout, KeepAlive: 30 * time.Second}, Config: cfg}
	return d.DialContext(ctx, network, addr)
}
