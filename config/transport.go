package config

import (
	"errors"
	"strings"
)

// Transport is how the gRPC listener is secured.
type Transport int

// The transports.
const (
	// TransportMTLS is TLS 1.3 with mandatory client certificates.
	TransportMTLS Transport = iota + 1
	// TransportInsecure is plaintext HTTP/2 (prior knowledge), for
	// development only.
	TransportInsecure
)

func (t Transport) String() string {
	switch t {
	case TransportMTLS:
		return "mTLS"
	case TransportInsecure:
		return "insecure"
	default:
		return "unknown"
	}
}

// ErrNoTransport is returned when neither mTLS nor the two insecure switches
// are configured.
var ErrNoTransport = errors.New("refusing to start gRPC server without mTLS: set [tls] cert, key and ca, " +
	"or enable plaintext with both [tls] insecure = true and RMS_ALLOW_INSECURE=1")

// ErrInsecureNotAllowed is returned when [tls] insecure is set but the
// environment does not confirm it.
var ErrInsecureNotAllowed = errors.New("refusing to start gRPC server in plaintext: [tls] insecure = true " +
	"also needs the environment variable RMS_ALLOW_INSECURE=1")

// ChooseTransport applies the plaintext gate: mTLS when cert, key and CA are
// configured; plaintext only when [tls] insecure is true and
// RMS_ALLOW_INSECURE=1 is in environ; otherwise an error.
func (t TLS) ChooseTransport(environ []string) (Transport, error) {
	if t.Cert != "" && t.Key != "" && t.CA != "" {
		return TransportMTLS, nil
	}
	if !t.Insecure {
		return 0, ErrNoTransport
	}
	for _, kv := range environ {
		if name, value, ok := strings.Cut(kv, "="); ok && name == EnvAllowInsecure && value == "1" {
			return TransportInsecure, nil
		}
	}
	return 0, ErrInsecureNotAllowed
}
