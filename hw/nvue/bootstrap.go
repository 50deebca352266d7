package nvue

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/rmsd/rmsd/hw"
)

// The bootstrap fallback for factory switches (rms-spec #45): before
// ConfigureSwitchCertificate has installed rmsd's material, an NVOS switch
// serves NVUE with a self-signed certificate that no configured CA
// verifies. With Options.BootstrapFallback a request whose verified (mTLS)
// exchange fails with a certificate error, and only such an error, is sent
// once more over unverified HTTPS. Upstream does so only when both its
// current transport and a verified-mTLS transport fail with certificate
// errors; a Pool in TLSVerify mode has one transport and it is the
// verified-mTLS one, so the two conditions are the one failure here.
//
// The failed exchange never reached NVUE (the TLS handshake did not
// complete, or the switch refused it before reading the request), so the
// second send replays nothing. Every request tries the verified transport
// first and the unverified one keeps no connection, so a switch whose
// certificate verifies, or verifies again once rmsd's is installed, is
// never talked to unverified.

// alertBadCertificate is the TLS bad_certificate alert (RFC 8446 §6).
const alertBadCertificate = 42

// IsCertificateError reports whether err is a TLS certificate failure that
// the bootstrap fallback answers: the server's certificate is signed by an
// unknown authority or does not name the switch, or the switch rejected
// ours with a bad_certificate alert. Refused connections, resets, timeouts
// and every other handshake failure are not.
func IsCertificateError(err error) bool {
	if err == nil {
		return false
	}
	var unknown x509.UnknownAuthorityError
	var name x509.HostnameError
	if errors.As(err, &unknown) || errors.As(err, &name) {
		return true
	}
	if alert, ok := errors.AsType[tls.AlertError](err); ok {
		return alert == alertBadCertificate
	}
	// A received alert is a net.OpError "remote error" around crypto/tls's
	// unexported alert type, known only by its text.
	if op, ok := errors.AsType[*net.OpError](err); ok && op.Op == "remote error" && op.Err != nil {
		return op.Err.Error() == "tls: bad certificate"
	}
	return false
}

// newBootstrapClient is the unverified HTTPS client of the fallback: no
// server verification, no client identity (a factory switch asks for
// none), and no kept connection, so the next request tries the verified
// transport again.
func (p *Pool) newBootstrapClient() *http.Client {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: true} //nolint:gosec // the documented bootstrap fallback for factory self-signed certificates
	t := &http.Transport{
		Proxy: nil,
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: p.opts.ConnectTimeout}, Config: cfg}
			return d.DialContext(ctx, network, addr)
		},
		DisableKeepAlives: true,
		IdleConnTimeout:   time.Second,
	}
	return &http.Client{Transport: hw.HolderTransport(p.observed(t))}
}

// BootstrapRequests is how many requests the pool has sent over the
// unverified bootstrap fallback.
func (p *Pool) BootstrapRequests() int64 { return p.bootstrapped.Load() }

// warnBootstrap logs, once per switch address, that the switch is talked
// to unverified, naming the switch and why (no credential is involved).
func (c *Client) warnBootstrap(cause error) {
	if _, seen := c.pool.warned.LoadOrStore(c.base, struct{}{}); seen {
		return
	}
	name := c.ep.HostName
	if name == "" {
		name = c.ep.Host()
	}
	c.log.Warn().Str("switch", name).Str("address", c.base).Str("reason", stripURL(cause).Error()).
		Msg("switch NVUE certificate does not verify against client_tls_root; using unverified HTTPS for bootstrap until ConfigureSwitchCertificate installs one")
}
