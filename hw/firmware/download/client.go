package download

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/manifest"
)

// newClient builds the HTTP client every transfer of a Downloader shares.
// It asks for no compression, so the bytes hashed are the bytes served.
func newClient(o Options) *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   o.TLSHandshakeTimeout,
		ResponseHeaderTimeout: o.ResponseHeaderTimeout,
		IdleConnTimeout:       o.IdleConnTimeout,
		MaxIdleConnsPerHost:   o.Concurrency,
		ForceAttemptHTTP2:     true,
		DisableCompression:    true,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: o.RootCAs},
	}
	return &http.Client{Transport: tr, CheckRedirect: redirectPolicy(o.MaxRedirects)}
}

// redirectPolicy follows at most max redirects, only to http and https,
// and drops the access token when a redirect leaves the first request's
// host or goes from https to http.
func redirectPolicy(max int) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > max {
			return fmt.Errorf("%w: more than %d redirects", ErrRedirect, max)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("%w: to a %q URL", ErrRedirect, req.URL.Scheme)
		}
		first := via[0].URL
		if req.URL.Host != first.Host || (first.Scheme == "https" && req.URL.Scheme == "http") {
			req.Header.Del(TokenHeader)
		}
		return nil
	}
}

// getHTTP starts a GET of an http source. The body it returns cancels ctx
// (through cancel) with ErrStalled when no bytes arrive for stall, and with
// a *RateError when it runs below the minimum rate over the rate window.
func (d *Downloader) getHTTP(ctx context.Context, cancel context.CancelCauseFunc, src manifest.Source, token hw.Secret) (io.ReadCloser, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.URL, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s: %v", ErrUnsupportedSource, src, urlReason(err))
	}
	sent := src.Kind == manifest.SourceArtifactory && !token.IsZero()
	if sent && req.URL.Scheme == "http" {
		if !d.opts.AllowInsecureToken {
			return nil, 0, fmt.Errorf("%w: %s: use an https location, or set [workflows] allow_insecure_artifact_token", ErrInsecureToken, src)
		}
		d.log.Warn().Str("source", src.String()).Msg("access token sent over plain http: [workflows] allow_insecure_artifact_token is set")
	}
	if sent {
		req.Header.Set(TokenHeader, token.Reveal())
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, 0, requestError(ctx, src, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, 0, &StatusError{Status: resp.StatusCode, URL: src.String(), TokenSent: sent && resp.Request.Header.Get(TokenHeader) != ""}
	}
	stall := d.opts.StallTimeout
	timer := time.AfterFunc(stall, func() { cancel(fmt.Errorf("%w: no data for %s", ErrStalled, stall)) })
	var rate *rateGuard
	if d.opts.MinBytesPerSecond > 0 {
		rate = startRateGuard(strings.ToLower(resp.Request.URL.Host), d.opts.MinBytesPerSecond, d.opts.RateWindow, cancel)
	}
	return &stallBody{ReadCloser: resp.Body, timer: timer, stall: stall, rate: rate}, resp.ContentLength, nil
}

// requestError explains a failed request without the URL's query.
func requestError(ctx context.Context, src manifest.Source, err error) error {
	if c := context.Cause(ctx); c != nil {
		return interrupted(c)
	}
	if errors.Is(err, ErrRedirect) {
		return fmt.Errorf("GET %s: %w", src, urlReason(err))
	}
	return fmt.Errorf("%w: GET %s: %v", ErrTransport, src, urlReason(err))
}

// urlReason is an error without the URL *url.Error quotes.
func urlReason(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// interrupted explains why a transfer's context ended.
func interrupted(cause error) error {
	if errors.Is(cause, ErrStalled) || errors.Is(cause, ErrTooSlow) {
		return cause
	}
	return fmt.Errorf("download interrupted: %w", cause)
}

// stallBody resets its stall timer whenever bytes arrive, and counts them
// for its rate guard (nil when the minimum rate is off).
type stallBody struct {
	io.ReadCloser
	timer *time.Timer
	stall time.Duration
	rate  *rateGuard
}

func (b *stallBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.stall)
		if b.rate != nil {
			b.rate.add(n)
		}
	}
	return n, err
}

func (b *stallBody) Close() error {
	b.timer.Stop()
	if b.rate != nil {
		b.rate.stop()
	}
	return b.ReadCloser.Close()
}
