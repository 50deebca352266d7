package callerid

import (
	"context"
	"crypto/x509"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// Identity is who made a call.
type Identity struct {
	// Verified is true when a client certificate was presented and
	// verified against the server's client trust roots; the name fields
	// below are empty otherwise.
	Verified bool
	// Subject is the certificate's distinguished name, as
	// "CN=...,OU=...,O=...".
	Subject            string
	CommonName         string
	OrganizationalUnit []string
	DNSNames           []string
	URIs               []string
	// Addr is the peer's network address ("host:port"), always set when
	// the transport knows it.
	Addr string
}

// FromContext returns the identity of the caller of the RPC whose context
// ctx is. Without a peer (an in-process call) it is the zero Identity.
func FromContext(ctx context.Context) Identity {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return Identity{}
	}
	var id Identity
	if p.Addr != nil {
		id.Addr = p.Addr.String()
	}
	tlsInfo, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok || len(tlsInfo.State.VerifiedChains) == 0 || len(tlsInfo.State.VerifiedChains[0]) == 0 {
		return id
	}
	return fromCertificate(tlsInfo.State.VerifiedChains[0][0], id.Addr)
}

func fromCertificate(c *x509.Certificate, addr string) Identity {
	id := Identity{
		Verified:           true,
		Subject:            c.Subject.String(),
		CommonName:         c.Subject.CommonName,
		OrganizationalUnit: append([]string(nil), c.Subject.OrganizationalUnit...),
		DNSNames:           append([]string(nil), c.DNSNames...),
		Addr:               addr,
	}
	for _, u := range c.URIs {
		id.URIs = append(id.URIs, u.String())
	}
	return id
}

// String is the identity as one log-friendly line: the subject and SANs of
// a verified certificate, else "peer <addr>", else "unknown".
func (id Identity) String() string {
	if !id.Verified {
		if id.Addr == "" {
			return "unknown"
		}
		return "peer " + id.Addr
	}
	var b strings.Builder
	b.WriteString(id.Subject)
	if len(id.DNSNames) > 0 {
		b.WriteString(" dns:")
		b.WriteString(strings.Join(id.DNSNames, ","))
	}
	if len(id.URIs) > 0 {
		b.WriteString(" uri:")
		b.WriteString(strings.Join(id.URIs, ","))
	}
	return b.String()
}
