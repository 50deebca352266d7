package redfish

import (
	"crypto/x509"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
)

// Defaults, taken from upstream RMS (southbound §2, §4).
const (
	DefaultPort                = 443
	DefaultConnectTimeout      = 10 * time.Second
	DefaultRequestTimeout      = 30 * time.Second
	DefaultUploadTimeout       = 600 * time.Second
	DefaultTaskPollInterval    = 5 * time.Second
	DefaultTaskTimeout         = 3 * time.Hour
	DefaultTaskReadTolerance   = 15 * time.Minute
	DefaultLivenessInterval    = 15 * time.Second
	DefaultLivenessTimeout     = 90 * 15 * time.Second
	DefaultProbeTimeout        = 5 * time.Second
	DefaultMaxIdleConns        = 1 << 16
	DefaultMaxIdleConnsPerHost = 2
	defaultIdleConnTimeout     = 90 * time.Second
	connBufferSize             = 512
	maxBodyBytes               = 8 << 20
)

// Options configure a Pool. The zero value is valid: every zero field takes
// its default.
type Options struct {
	// ConnectTimeout bounds TCP connect plus TLS handshake (default 10 s).
	ConnectTimeout time.Duration
	// RequestTimeout bounds one ordinary request, body included (default 30 s).
	RequestTimeout time.Duration
	// UploadTimeout bounds one firmware upload (default 600 s).
	UploadTimeout time.Duration
	// TaskPollInterval is the firmware task polling period (default 5 s).
	TaskPollInterval time.Duration
	// TaskTimeout bounds WaitTask (default 3 h).
	TaskTimeout time.Duration
	// TaskReadTolerance is how long WaitTask tolerates failing task reads
	// before giving up (default 15 min).
	TaskReadTolerance time.Duration
	// LivenessInterval is the probe period of WaitDownUp (default 15 s).
	LivenessInterval time.Duration
	// LivenessTimeout bounds WaitDownUp and WaitPowerState (default 22.5 min).
	LivenessTimeout time.Duration
	// ProbeTimeout bounds one liveness probe (default 5 s).
	ProbeTimeout time.Duration

	// VerifyTLS turns BMC certificate verification on. Upstream RMS never
	// verifies BMC certificates, so the default is off.
	VerifyTLS bool
	// RootCAs is the pool used when VerifyTLS is set (nil = system roots).
	RootCAs *x509.CertPool

	// MaxIdleConns caps idle connections across all BMCs (default 65,536:
	// every BMC of a large site keeps its connection, so a periodic read
	// of the whole site does not handshake again; idle connections still
	// close after 90 s). Reads (body-less GETs) and requests with a body
	// go through transports of their own, each with this cap.
	MaxIdleConns int
	// MaxIdleConnsPerHost caps idle connections per BMC in each of those
	// two transports (default 2; RMS serialises operations per node, so
	// one or two suffice).
	MaxIdleConnsPerHost int

	// Observe, when set, is told of every request's latency and outcome,
	// by the device kind of the client that sent it (DeviceClient).
	Observe hw.RequestObserver

	// Logger receives debug traces of requests (never credentials). The
	// zero value logs nothing.
	Logger zerolog.Logger
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.ConnectTimeout, DefaultConnectTimeout)
	def(&o.RequestTimeout, DefaultRequestTimeout)
	def(&o.UploadTimeout, DefaultUploadTimeout)
	def(&o.TaskPollInterval, DefaultTaskPollInterval)
	def(&o.TaskTimeout, DefaultTaskTimeout)
	def(&o.TaskReadTolerance, DefaultTaskReadTolerance)
	def(&o.LivenessInterval, DefaultLivenessInterval)
	def(&o.LivenessTimeout, DefaultLivenessTimeout)
	def(&o.ProbeTimeout, DefaultProbeTimeout)
	if o.MaxIdleConns <= 0 {
		o.MaxIdleConns = DefaultMaxIdleConns
	}
	if o.MaxIdleConnsPerHost <= 0 {
		o.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	return o
}
