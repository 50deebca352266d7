package gnmicap

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nmxc"
)

// Defaults: NVOS's gNMI port and upstream's per-call bound.
const (
	DefaultPort    = 9339
	DefaultTimeout = 30 * time.Second
)

// Options configure a Capabilities check.
type Options struct {
	// Port is the gNMI port ([switches] gnmi_port).
	Port int
	// TLS secures the connection; nil means plaintext.
	TLS *tls.Config
	// Timeout bounds the whole call, connection included.
	Timeout time.Duration
}

// Capabilities calls gNMI Capabilities on the switch at ep with ep's
// credentials as "username"/"password" metadata and returns the gNMI
// version the server reports. Errors never carry the password.
func Capabilities(ctx context.Context, ep hw.Endpoint, opts Options) (string, error) {
	if opts.Port <= 0 {
		opts.Port = DefaultPort
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if ep.Host() == "" {
		return "", errors.New("gnmi capabilities: endpoint has no IP or host name")
	}
	addr := net.JoinHostPort(ep.Host(), strconv.Itoa(opts.Port))
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(nmxc.TransportCredentials(ep, opts.TLS)))
	if err != nil {
		return "", fmt.Errorf("gnmi capabilities on %s: %w", addr, err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "username", ep.Credentials.Username, "password", ep.Credentials.Password.Reveal())
	resp, err := gpb.NewGNMIClient(conn).Capabilities(ctx, &gpb.CapabilityRequest{})
	if err != nil {
		msg := err.Error()
		if pw := ep.Credentials.Password.Reveal(); pw != "" {
			msg = strings.ReplaceAll(msg, pw, "[REDACTED]")
		}
		return "", fmt.Errorf("gnmi capabilities on %s: %s", addr, msg)
	}
	return resp.GetGNMIVersion(), nil
}
