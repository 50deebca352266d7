package callerid

import "crypto/tls"

// FromTLS returns the identity of a client that reached a TLS listener
// other than gRPC (an HTTP request's r.TLS and r.RemoteAddr): the first
// verified chain's leaf when the client presented a certificate the
// server verified, else only addr. A nil state (plaintext) gives addr only.
func FromTLS(state *tls.ConnectionState, addr string) Identity {
	if state == nil || len(state.VerifiedChains) == 0 || len(state.VerifiedChains[0]) == 0 {
		return Identity{Addr: addr}
	}
	return fromCertificate(state.VerifiedChains[0][0], addr)
}
