package nvossim

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"

	"google.golang.org/grpc/credentials"
)

// sniffCreds are server transport credentials that accept TLS and plaintext
// on one port, as a switch service that may or may not be bound to mTLS
// does: a connection whose first byte is a TLS handshake record gets a TLS
// handshake, any other is served as is. Handlers tell them apart by the
// peer's AuthInfo (clientVerifiedLocked).
type sniffCreds struct {
	tls *tls.Config
}

// plainInfo is the AuthInfo of a plaintext connection.
type plainInfo struct{ credentials.CommonAuthInfo }

func (plainInfo) AuthType() string { return "plaintext" }

// peeked is a connection whose first bytes were read ahead.
type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (c *peeked) Read(p []byte) (int, error) { return c.r.Read(p) }

// handshakeTimeout bounds waiting for a client's first bytes.
const handshakeTimeout = 10 * time.Second

func (c sniffCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	_ = raw.SetReadDeadline(time.Now().Add(handshakeTimeout))
	defer func() { _ = raw.SetReadDeadline(time.Time{}) }()
	br := bufio.NewReader(raw)
	first, err := br.Peek(1)
	if err != nil {
		return nil, nil, err
	}
	conn := &peeked{Conn: raw, r: br}
	if first[0] != 0x16 { // not a TLS handshake record
		return conn, plainInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}, nil
	}
	tc := tls.Server(conn, c.tls)
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, nil, err
	}
	return tc, credentials.TLSInfo{State: tc.ConnectionState(),
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
}

func (sniffCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("nvossim: server-side credentials only")
}

func (sniffCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls"}
}

func (c sniffCreds) Clone() credentials.TransportCredentials { return sniffCreds{tls: c.tls.Clone()} }

func (sniffCreds) OverrideServerName(string) error { return nil }

// gatedListener drops new connections while the switch is unreachable.
type gatedListener struct {
	net.Listener
	sw *Switch
}

// Accept returns the next connection accepted while the switch is up.
func (g *gatedListener) Accept() (net.Conn, error) {
	for {
		c, err := g.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if !g.sw.isDown() {
			return c, nil
		}
		_ = c.Close()
	}
}
