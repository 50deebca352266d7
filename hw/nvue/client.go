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
	"strconv"
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

// Options configure a Client. The zero value gives upstream behaviour:
// unverified HTTPS, 10 s connect, 30 s per request, 1 s polls, 60 s waits.
type Options struct {
	TLS     TLSMode
	RootCAs *x509.CertPool
	// ClientCertificate, when set, is presented for mTLS.
	ClientCertificate *tls.Certificate

	ConnectTimeout time.Duration
	RequestTimeout time.Duration
	// PollInterval and WaitTimeout drive WaitAction and WaitRevision.
	PollInterval time.Duration
	WaitTimeout  time.Duration

	// Logger receives one debug line per request (never credentials).
	Logger zerolog.Logger
}

func (o Options) withDefaults() Options {
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

// Client talks to one NVOS switch. It is safe for concurrent use; Close
// releases its idle connections.
type Client struct {
	ep   hw.Endpoint
	opts Options
	base string
	http *http.Client
	log  zerolog.Logger
}

// New builds a client for the switch's host endpoint (IP, optional host
// name used as URL host and TLS name, port defaulting to 443, credentials).
func New(ep hw.Endpoint, opts Options) (*Client, error) {
	if ep.Host() == "" {
		return nil, fmt.Errorf("nvue client: %w: endpoint has no IP or host name", ErrRequest)
	}
	opts = opts.withDefaults()
	dialAddr := ep.Addr(DefaultPort)
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	switch opts.TLS {
	case TLSInsecure:
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // upstream insecure-switch policy, explicit in Options
	case TLSVerify:
		tlsCfg.RootCAs = opts.RootCAs
		tlsCfg.ServerName = ep.Host()
		if ep.HostName != "" {
			tlsCfg.ServerName = ep.HostName
		}
	default:
		return nil, fmt.Errorf("nvue client: %w: unknown TLS mode %d", ErrRequest, opts.TLS)
	}
	if opts.ClientCertificate != nil {
		tlsCfg.Certificates = []tls.Certificate{*opts.ClientCertificate}
	}
	dialer := &net.Dialer{Timeout: opts.ConnectTimeout}
	tr := &http.Transport{
		Proxy: nil,
		// TCP always goes to the endpoint's IP, whatever the URL host is.
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, dialAddr)
		},
		TLSClientConfig:     tlsCfg,
		TLSHandshakeTimeout: opts.ConnectTimeout,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
		ForceAttemptHTTP2:   false,
	}
	host := ep.Host()
	if ep.HostName != "" {
		host = ep.HostName
	}
	port := ep.Port
	if port == 0 {
		port = DefaultPort
	}
	return &Client{
		ep:   ep,
		opts: opts,
		base: "https://" + net.JoinHostPort(host, strconv.Itoa(port)),
		http: &http.Client{Transport: tr},
		log:  opts.Logger,
	}, nil
}

// WithCredentials returns a client for the same switch and options that
// logs in with cred (a "candidate" client, e.g. during password rotation).
// It shares nothing mutable with c.
func (c *Client) WithCredentials(cred hw.Credentials) (*Client, error) {
	ep := c.ep
	ep.Credentials = cred
	return New(ep, c.opts)
}

// Endpoint returns the endpoint the client talks to.
func (c *Client) Endpoint() hw.Endpoint { return c.ep }

// Close releases idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

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
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, fmt.Errorf("%s %s: encode body: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w: %v", method, path, ErrRequest, err)
	}
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(c.ep.Credentials.Username, c.ep.Credentials.Password.Reveal())
	start := time.Now()
	resp, err := c.http.Do(req)
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
	if pw := c.ep.Credentials.Password.Reveal(); pw != "" {
		s = strings.ReplaceAll(s, pw, "[REDACTED]")
	}
	return s
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
