package redfish

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/httpsync"
	"github.com/rs/zerolog"
)

// Pool owns the HTTP transports shared by every Client made from it. Make
// one per process (or per configuration) and close it when done.
type Pool struct {
	opts Options
	// reads carries the GETs (every read of a BMC): the exchange runs in
	// the caller's goroutine and an idle connection is its TLS connection
	// alone (hw/httpsync); transport carries the requests with a body.
	reads     *httpsync.Transport
	transport *http.Transport
	http      *http.Client
}

// NewPool builds a pool. The zero Options are upstream's defaults.
func NewPool(opts Options) *Pool {
	opts = opts.withDefaults()
	dialer := &net.Dialer{Timeout: opts.ConnectTimeout, KeepAlive: 30 * time.Second}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if opts.VerifyTLS {
		tlsCfg.RootCAs = opts.RootCAs
	} else {
		// BMC certificates are self-signed; upstream RMS never verifies them.
		tlsCfg.InsecureSkipVerify = true //nolint:gosec // explicit, configurable policy
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsCfg,
		TLSHandshakeTimeout:   opts.ConnectTimeout,
		MaxIdleConns:          opts.MaxIdleConns,
		MaxIdleConnsPerHost:   opts.MaxIdleConnsPerHost,
		IdleConnTimeout:       defaultIdleConnTimeout,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     false,
		// This transport carries the requests with a body (reads go through
		// reads below). Each of its pooled connections holds a read and a
		// write buffer for as long as it lives: Redfish requests are a few
		// hundred bytes, a reply's headers a few hundred more (longer ones
		// are read in pieces), larger bodies and uploads bypass the
		// buffers, so 512 bytes each (net/http's default is 4 KiB). The
		// reads borrow buffers of the same size for each exchange.
		ReadBufferSize:  connBufferSize,
		WriteBufferSize: connBufferSize,
	}
	// A site's periodic reads keep a connection to every BMC: through
	// net/http each would also keep two goroutines and two buffers, 20 KiB
	// and more per BMC, and every read would pass between three goroutines.
	reads := httpsync.New(httpsync.Options{
		Dial:             dialer.DialContext,
		TLS:              tlsCfg,
		HandshakeTimeout: opts.ConnectTimeout,
		MaxIdlePerHost:   opts.MaxIdleConnsPerHost,
		MaxIdle:          opts.MaxIdleConns,
		IdleTimeout:      defaultIdleConnTimeout,
		BufferSize:       connBufferSize,
	})
	return &Pool{
		opts:      opts,
		reads:     reads,
		transport: tr,
		http: &http.Client{
			// Names the job or lease a request is for; observed by device kind.
			Transport: hw.HolderTransport(hw.ObservedTransport(httpsync.Route(reads, tr), "redfish", hw.KindUnknown, opts.Observe)),
			// Redfish answers are never redirects RMS follows; surface them.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// Options returns the effective options (defaults filled in).
func (p *Pool) Options() Options { return p.opts }

// Close drops every idle connection. Clients made from the pool must not be
// used afterwards.
func (p *Pool) Close() {
	p.reads.CloseIdleConnections()
	p.transport.CloseIdleConnections()
}

// Client talks to one BMC. It is safe for concurrent use.
type Client struct {
	pool  *Pool
	kind  hw.Kind // the device's, for the request observer
	addr  string  // host:port, as the debug log names the BMC
	base  string  // https://host:port
	creds hw.Credentials
	// log is the pool's logger, shared: a client is made per BMC (and
	// kept by hw/nodeops for as long as the node's configuration holds),
	// so it adds the BMC's address to each debug line itself rather than
	// keep a logger of its own.
	log zerolog.Logger
}

// Client returns a client for the BMC at ep. The endpoint must name a host
// and carry a user name and password (Basic auth on every request) or a
// session token (sent as X-Auth-Token).
func (p *Pool) Client(ep hw.Endpoint) (*Client, error) {
	return p.DeviceClient(hw.KindUnknown, ep)
}

// DeviceClient is Client for a BMC of a known kind of device (compute,
// switch or power shelf): the requests it sends are observed as that
// kind (Options.Observe).
func (p *Pool) DeviceClient(kind hw.Kind, ep hw.Endpoint) (*Client, error) {
	if ep.Host() == "" {
		return nil, fmt.Errorf("redfish client: endpoint has no address: %w", ErrClient)
	}
	userPass := ep.Credentials.Username != "" && !ep.Credentials.Password.IsZero()
	if !userPass && ep.Credentials.Token.IsZero() {
		return nil, fmt.Errorf("redfish client %s: user name and password (or a session token) required: %w", ep.Host(), ErrClient)
	}
	addr := ep.Addr(DefaultPort)
	return &Client{
		pool:  p,
		kind:  kind,
		addr:  addr,
		base:  "https://" + addr,
		creds: ep.Credentials,
		log:   p.opts.Logger,
	}, nil
}

// BaseURL returns https://host:port of the BMC.
func (c *Client) BaseURL() string { return c.base }

// String names the BMC; it never includes credentials.
func (c *Client) String() string { return "redfish " + c.base + " (" + c.creds.String() + ")" }

// GoString keeps %#v from printing the credentials field by field.
func (c *Client) GoString() string { return c.String() }

// Format makes every fmt verb print String.
func (c *Client) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// request is one HTTP exchange.
type request struct {
	method  string
	path    string
	body    io.Reader
	ctype   string
	length  int64
	header  http.Header
	timeout time.Duration
}

// response is a completed exchange with a 2xx status.
type response struct {
	status int
	header http.Header
	body   []byte
}

// resolve turns an advertised target (absolute path or full URL) into a URL
// on this BMC, collapsing duplicate slashes.
func (c *Client) resolve(target string) (string, error) {
	p := target
	if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
		u, err := url.Parse(p)
		if err != nil {
			return "", fmt.Errorf("parse target %q: %w", target, ErrInvalidResponse)
		}
		p = u.RequestURI()
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	for strings.Contains(p, "//") {
		p = strings.ReplaceAll(p, "//", "/")
	}
	return c.base + p, nil
}

func (c *Client) do(ctx context.Context, r request) (*response, error) {
	u, err := c.resolve(r.path)
	if err != nil {
		return nil, err
	}
	timeout := r.timeout
	if timeout <= 0 {
		timeout = c.pool.opts.RequestTimeout
	}
	rctx, cancel := context.WithTimeout(hw.WithDeviceKind(ctx, c.kind), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, r.method, u, r.body)
	if err != nil {
		return nil, fmt.Errorf("redfish %s %s: build request: %w", r.method, u, ErrClient)
	}
	if r.length > 0 {
		req.ContentLength = r.length
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	hw.NameHolder(req)
	if r.ctype != "" {
		req.Header.Set("Content-Type", r.ctype)
	}
	if !c.creds.Token.IsZero() {
		req.Header.Set("X-Auth-Token", c.creds.Token.Reveal())
	} else {
		req.SetBasicAuth(c.creds.Username, c.creds.Password.Reveal())
	}
	start := time.Now()
	resp, err := c.pool.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("redfish %s %s: %w", r.method, u, classify(ctx, err))
	}
	defer resp.Body.Close()
	body, err := readBody(resp, maxBodyBytes)
	if err != nil {
		return nil, fmt.Errorf("redfish %s %s: read body: %w", r.method, u, classify(ctx, err))
	}
	if len(body) > maxBodyBytes {
		return nil, fmt.Errorf("redfish %s %s: body exceeds %d bytes: %w", r.method, u, maxBodyBytes, ErrInvalidResponse)
	}
	if e := c.log.Debug(); e.Enabled() {
		e.Str("bmc", c.addr).Str("method", r.method).Str("path", req.URL.Path).Int("status", resp.StatusCode).
			Dur("took_ms", time.Since(start)).Msg("redfish request")
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &HTTPError{Method: r.method, URL: u, StatusCode: resp.StatusCode, Message: errorMessage(body)}
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// classify maps a transport error onto the sentinels, keeping the cause.
func classify(parent context.Context, err error) error {
	if errors.Is(parent.Err(), context.Canceled) {
		return err // the caller gave up: report the cancellation as is
	}
	var nerr net.Error
	timeout := errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout())
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial" && timeout:
		// Nothing answered the connection at all: unreachable, and a timeout.
		return fmt.Errorf("%w: %w: %w", ErrUnreachable, ErrTimeout, err)
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	case timeout:
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return fmt.Errorf("%w: %w", ErrTransport, err)
}

// maxErrorMessage bounds the BMC's text kept in an HTTPError.
const maxErrorMessage = 512

// errorBody is the part of a Redfish error answer errorMessage reads.
type errorBody struct {
	Error struct {
		Message  string `json:"message"`
		Extended []struct {
			Message string `json:"Message"`
		} `json:"@Message.ExtendedInfo"`
	} `json:"error"`
}

// errorMessage extracts a short human message from a Redfish error body:
// error.message, then each @Message.ExtendedInfo message that says
// something new (BMCs commonly repeat error.message there word for word).
func errorMessage(body []byte) string {
	var e errorBody
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	msgs := []string{e.Error.Message}
	for _, x := range e.Error.Extended {
		msgs = append(msgs, x.Message)
	}
	var parts []string
	seen := map[string]bool{}
	for _, m := range msgs {
		m = strings.TrimSpace(m)
		if m == "" || seen[m] {
			continue
		}
		seen[m] = true
		parts = append(parts, m)
	}
	return clipMessage(strings.Join(parts, "; "), maxErrorMessage)
}

// clipMessage cuts s to at most max bytes on a character boundary.
func clipMessage(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}

// get fetches path and decodes the JSON body into v.
func (c *Client) get(ctx context.Context, path string, v any) error {
	resp, err := c.do(ctx, request{method: http.MethodGet, path: path})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(resp.body, v); err != nil {
		return fmt.Errorf("redfish GET %s: decode: %w: %v", path, ErrInvalidResponse, err)
	}
	return nil
}

// send issues a JSON request (POST or PATCH); a nil payload sends {}.
func (c *Client) send(ctx context.Context, method, path string, payload any, hdr http.Header) (*response, error) {
	if payload == nil {
		payload = struct{}{}
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("redfish %s %s: encode body: %w", method, path, err)
	}
	return c.do(ctx, request{method: method, path: path, body: bytes.NewReader(b), ctype: "application/json",
		length: int64(len(b)), header: hdr})
}
