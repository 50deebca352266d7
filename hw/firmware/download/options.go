package download

import (
	"crypto/x509"
	"time"

	"github.com/rs/zerolog"
)

// Defaults.
const (
	// DefaultMaxArtifactBytes is [workflows] max_artifact_bytes' default, 8 GiB.
	DefaultMaxArtifactBytes      int64 = 8 << 30
	DefaultConcurrency                 = 4
	DefaultConnectTimeout              = 10 * time.Second
	DefaultTLSHandshakeTimeout         = 10 * time.Second
	DefaultResponseHeaderTimeout       = 60 * time.Second
	DefaultStallTimeout                = 60 * time.Second
	DefaultIdleConnTimeout             = 90 * time.Second
	DefaultMaxRedirects                = 10
)

// Options configure a Downloader. The zero value is valid: every zero
// field takes its default, and file sources are refused.
type Options struct {
	// SourceRoot is firmware_dir: a file source must lie inside it, and a
	// relative one is taken relative to it. Empty refuses file sources.
	SourceRoot string
	// MaxArtifactBytes bounds every artifact (default 8 GiB).
	MaxArtifactBytes int64
	// Concurrency is how many transfers one Downloader runs at once,
	// across all Download calls (default 4).
	Concurrency int
	// ConnectTimeout bounds a TCP connect (default 10 s).
	ConnectTimeout time.Duration
	// TLSHandshakeTimeout bounds a TLS handshake (default 10 s).
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for a response's headers once
	// the request is sent (default 60 s).
	ResponseHeaderTimeout time.Duration
	// StallTimeout is the longest wait for the next bytes of a body
	// (default 60 s). There is no overall limit: a large artifact on a slow
	// link takes as long as it takes while it keeps moving.
	StallTimeout time.Duration
	// IdleConnTimeout closes idle connections (default 90 s).
	IdleConnTimeout time.Duration
	// MaxRedirects is the most redirects one request follows (default 10).
	MaxRedirects int
	// AllowInsecureToken lets an access token go to an artifactory or
	// jfrog source over plain http (with a warning in the log each time);
	// without it such a download is refused (ErrInsecureToken) and the
	// token is never sent.
	AllowInsecureToken bool
	// RootCAs verifies https servers (nil: the system roots).
	RootCAs *x509.CertPool
	// Logger receives start, progress (every 10 %) and end of every
	// transfer. The zero value logs nothing.
	Logger zerolog.Logger
}

func (o Options) withDefaults() Options {
	dur := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	dur(&o.ConnectTimeout, DefaultConnectTimeout)
	dur(&o.TLSHandshakeTimeout, DefaultTLSHandshakeTimeout)
	dur(&o.ResponseHeaderTimeout, DefaultResponseHeaderTimeout)
	dur(&o.StallTimeout, DefaultStallTimeout)
	dur(&o.IdleConnTimeout, DefaultIdleConnTimeout)
	if o.MaxArtifactBytes <= 0 {
		o.MaxArtifactBytes = DefaultMaxArtifactBytes
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	return o
}
