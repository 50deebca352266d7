package download

import (
	"crypto/x509"
	"time"

	"github.com/rs/zerolog"
)

// Defaults.
const (
	// DefaultMaxArtifactBytes is [workflows] max_artifact_bytes' default, 8 GiB.
	DefaultMaxArtifactBytes int64 = 8 << 30
	DefaultConcurrency            = 4
	DefaultMaxPerHost             = 2
	// DefaultMinBytesPerSecond is 64 KiB/s.
	DefaultMinBytesPerSecond     int64 = 64 << 10
	DefaultRateWindow                  = 60 * time.Second
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
	// Member is the id of the cluster member this Downloader fetches for
	// ("" for a single rmsd): its temporary files carry MemberTag(Member),
	// so that ReapTempFiles with the same id at the member's next start
	// removes its leftovers and no other member's.
	Member string
	// MaxArtifactBytes bounds every artifact (default 8 GiB).
	MaxArtifactBytes int64
	// Concurrency is how many transfers one Downloader runs at once,
	// across all Download calls (default 4).
	Concurrency int
	// MaxPerHost is how many of those transfers may come from one host
	// (host[:port] of the URL; every file source counts as one host) at
	// once (default 2, at most Concurrency). The objects (cache
	// directories) whose artifacts wait take free slots in turn, so
	// neither a slow host nor an object with many artifacts holds every
	// slot.
	MaxPerHost int
	// MinBytesPerSecond is the slowest an http transfer may run, measured
	// over the last RateWindow (default 64 KiB/s); slower, it fails with
	// ErrTooSlow. Negative turns the rule off.
	MinBytesPerSecond int64
	// RateWindow is the window MinBytesPerSecond is measured over (default
	// 60 s). A transfer is first judged one window after its response
	// headers arrive, then continuously, so bytes that trickle in do not
	// postpone the verdict as they postpone a stall.
	RateWindow time.Duration
	// ConnectTimeout bounds a TCP connect (default 10 s).
	ConnectTimeout time.Duration
	// TLSHandshakeTimeout bounds a TLS handshake (default 10 s).
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for a response's headers once
	// the request is sent (default 60 s).
	ResponseHeaderTimeout time.Duration
	// StallTimeout is the longest wait for the next bytes of a body
	// (default 60 s); every byte restarts it. There is no overall limit: a
	// large artifact on a slow link takes as long as it takes while it
	// keeps above MinBytesPerSecond.
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
	if o.MaxPerHost <= 0 {
		o.MaxPerHost = DefaultMaxPerHost
	}
	o.MaxPerHost = min(o.MaxPerHost, o.Concurrency)
	if o.MinBytesPerSecond == 0 {
		o.MinBytesPerSecond = DefaultMinBytesPerSecond
	}
	dur(&o.RateWindow, DefaultRateWindow)
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	return o
}
