package nvue

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
)

// Default timeouts and intervals (upstream values).
const (
	DefaultPort           = 443
	DefaultConnectTimeout = 10 * time.Second
	DefaultRequestTimeout = 30 * time.Second
	DefaultPollInterval   = time.Second
	DefaultWaitTimeout    = 60 * time.Second
	maxBodyBytes          = 8 << 20
	maxDetailBytes        = 512
)

// TLSMode selects how the switch's server certificate is checked.
type TLSMode int

const (
	// TLSInsecure (the zero value, upstream's "insecure switch" mode): HTTPS
	// without verifying the server certificate. Switch certificates are
	// usually self-signed.
	TLSInsecure TLSMode = iota
	// TLSVerify verifies the server certificate against Options.RootCAs
	// (system roots when nil) for the endpoint's host name, or its IP.
	TLSVerify
)

// Options configure a Pool and its clients. The zero value gives upstream
// behaviour: unverified HTTPS, NVUE on 443, 10 s connect, 30 s per request,
// 1 s polls, 60 s waits.
type Options struct {
	TLS     TLSMode
	RootCAs *x509.CertPool
	// ClientCertificate, when set, is presented for mTLS.
	ClientCertificate *tls.Certificate
	// BootstrapFallback (TLSVerify only) sends a request whose verified
	// exchange failed with a certificate error (IsCertificateError) once
	// more over unverified HTTPS, as upstream bootstraps factory switches
	// with self-signed certificates; see bootstrap.go.
	BootstrapFallback bool

	// Port is the NVUE HTTPS port of a host endpoint whose port is 0 or 22
	// (default 443, [switches] nvue_port).
	Port int

	ConnectTimeout time.Duration
	RequestTimeout time.Duration
	// PollInterval and WaitTimeout drive WaitAction and WaitRevision.
	PollInterval time.Duration
	WaitTimeout  time.Duration

	// Observe, when set, is told of every request's latency and outcome
	// (as protocol "nvue", device kind switch), bootstrap requests included.
	Observe hw.RequestObserver
	// Logger receives one debug line per request (never credentials).
	Logger zerolog.Logger
}

func (o Options) withDefaults() Options {
	if o.Port <= 0 {
		o.Port = DefaultPort
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.PollInterval <= 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.WaitTimeout <= 0 {
		o.WaitTimeout = DefaultWaitTimeout
	}
	return o
}

// Client talks to one NVOS switch over its Pool's connections. It is safe
// for concurrent use.
type Client struct {
	pool *Pool
	own  bool // made by New: Close closes the pool
	ep   hw.Endpoint
	opts Options
	base string // https://<ip or host>:<port>: TCP always goes to the endpoint's address
	// host is the Host header (<host name>:<port>) when the endpoint has a
	// host name besides its IP, as upstream's base URL names the host.
	host string
	// tlsName is the name the server certificate must carry (TLSVerify).
	tlsName string
	log     zerolog.Logger
}

// New builds a client with a pool of its own (one switch, one-off use);
// Close releases it. A daemon makes clients from one shared Pool instead.
func New(ep hw.Endpoint, opts Options) (*Client, error) {
	p, err := NewPool(opts)
	if err != nil {
		return nil, err
	}
	c, err := p.Client(ep)
	if err != nil {
		p.Close()
		return nil, err
	}
	c.own = true
	return c, nil
}

// sshPort is the switch SSH port. Switch inventories keep one port column
// for SSH and NVUE, so an endpoint on it means NVUE on Options.Port.
const sshPort = 22

// port returns the NVUE port of ep: its own, or o.Port when that is 0 or 22.
func (o Options) port(ep hw.Endpoint) int {
	if ep.Port == 0 || ep.Port == sshPort {
		return o.Port
	}
	return ep.Port
}

// WithCredentials returns a client for the same switch, options and pool
// that logs in with cred (a "candidate" client, e.g. during password
// rotation). Its Close releases nothing.
func (c *Client) WithCredentials(cred hw.Credentials) (*Client, error) {
	ep := c.ep
	ep.Credentials = cred
	return c.pool.Client(ep)
}

// Endpoint returns the endpoint the client talks to.
func (c *Client) Endpoint() hw.Endpoint { return c.ep }

// Close releases the pool of a client made by New; for a client of a
// shared Pool it does nothing (the pool owns the connections).
func (c *Client) Close() {
	if c.own {
		c.pool.Close()
	}
}

// do sends one request; out (if non-nil) receives the decoded JSON body of a
// 2xx answer. It returns the raw body too.
func (c *Client) do(ctx context.Context, method, path string, in, out any) ([]byte, error) {
	status, raw, err := c.send(ctx, method, path, in)
	if err != nil {
		return nil, err
	}
	if status < 200 || status > 299 {
		return raw, &HTTPError{Method: method, Path: path, Status: status, Detail: c.detail(raw)}
	}
	if out != nil {
		if len(bytes.TrimSpace(raw)) == 0 {
			raw = []byte("{}")
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return raw, fmt.Errorf("%s %s: %w: %v", method, path, ErrInvalidResponse, err)
		}
	}
	return raw, nil
}

// send performs the HTTP exchange and returns status and body; only
// transport problems are errors.
func (c *Client) send(ctx context.Context, method, path string, in any) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
	defer cancel()
	req, err := c.newRequest(ctx, method, path, in)
	if err != nil {
		return 0, nil, err
	}
	start := time.Now()
	resp, err := c.pool.http.Do(req)
	if err != nil && c.pool.bootstrap != nil && IsCertificateError(err) {
		resp, err = c.sendUnverified(ctx, method, path, in, err)
	}
	if err != nil {
		return 0, nil, c.transportErr(ctx, method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return 0, nil, c.transportErr(ctx, method, path, err)
	}
	if len(raw) > maxBodyBytes {
		return 0, nil, fmt.Errorf("%s %s: %w: body larger than %d bytes", method, path, ErrInvalidResponse, maxBodyBytes)
	}
	c.log.Debug().Str("switch", c.ep.Host()).Str("method", method).Str("path", path).
		Int("status", resp.StatusCode).Dur("took_ms", time.Since(start)).Msg("nvue request")
	return resp.StatusCode, raw, nil
}

// newRequest builds one request: in (if non-nil) as its JSON body, Basic
// authentication, the endpoint's Host and TLS name.
func (c *Client) newRequest(ctx context.Context, method, path string, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode body: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(withTLSName(ctx, c.tlsName), method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %v", method, path, ErrRequest, err)
	}
	if c.host != "" {
		req.Host = c.host
	}
	req.Header.Set("Accept", "application/json")
	hw.NameHolder(req)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(c.ep.Credentials.Username, c.ep.Credentials.Password.Reveal())
	return req, nil
}

// sendUnverified is the bootstrap fallback (bootstrap.go): the request
// again over unverified HTTPS after the verified exchange failed with the
// certificate error verified. A failure names both.
func (c *Client) sendUnverified(ctx context.Context, method, path string, in any, verified error) (*http.Response, error) {
	c.warnBootstrap(verified)
	req, err := c.newRequest(ctx, method, path, in)
	if err != nil {
		return nil, err
	}
	c.pool.bootstrapped.Add(1)
	resp, err := c.pool.bootstrap.Do(req)
	if err != nil {
		return nil, fmt.Errorf("verified: %v; unverified bootstrap: %w", stripURL(verified), stripURL(err))
	}
	return resp, nil
}

// transportErr classifies a failed exchange as timeout or transport error.
func (c *Client) transportErr(ctx context.Context, method, path string, err error) error {
	var ne net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%s %s on %s: %w: %v", method, path, c.ep.Host(), ErrTimeout, stripURL(err))
	}
	return fmt.Errorf("%s %s on %s: %w: %v", method, path, c.ep.Host(), ErrTransport, stripURL(err))
}

// stripURL drops net/http's URL prefix from an error (it repeats method and path).
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// detail extracts a bounded, secret-free message from an error body.
func (c *Client) detail(raw []byte) string {
	var m map[string]any
	msg := strings.TrimSpace(string(raw))
	if json.Unmarshal(raw, &m) == nil {
		for _, k := range []string{"detail", "message", "title", "error"} {
			if s, ok := m[k].(string); ok && s != "" {
				msg = s
				break
			}
		}
	}
	msg = c.redact(msg)
	if len(msg) > maxDetailBytes {
		msg = msg[:maxDetailBytes] + "…"
	}
	return msg
}

// redact removes the client's own password from server text.
func (c *Client) redact(s string) string {
	return hw.Scrub(s, c.ep.Credentials.Password.Reveal()) // also as JSON escapes it
}

// Probe GETs path and returns the HTTP status, whatever it is; only
// transport failures and timeouts are errors.
func (c *Client) Probe(ctx context.Context, path string) (int, error) {
	status, _, err := c.send(ctx, http.MethodGet, path, nil)
	return status, err
}

// getJSON GETs path into out.
func (c *Client) getJSON(ctx context.Context, path string, out any) error {
	_, err := c.do(ctx, http.MethodGet, path, nil, out)
	return err
}
