package ctl

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// transportCredentials are plaintext, unless --tls, --ca or --cert ask for
// TLS: the server is verified against --ca (the system roots without it)
// and --server-name (the host of --addr without it), and --cert/--key are
// presented as the client certificate rmsd's mTLS listener requires.
func (t *target) transportCredentials() (credentials.TransportCredentials, error) {
	if !t.TLS && t.CA == "" && t.Cert == "" {
		return insecure.NewCredentials(), nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, usageError("--ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, usageError("--ca %s: no PEM certificate in it", t.CA)
		}
		cfg.RootCAs = pool
	}
	if t.Cert != "" {
		cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, usageError("--cert/--key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(cfg), nil
}

// dial opens a (lazy) client connection to the target.
func (t *target) dial() (*grpc.ClientConn, error) {
	creds, err := t.transportCredentials()
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(t.Addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return nil, usageError("--addr %q: %w", t.Addr, err)
	}
	return conn, nil
}

// String describes the target without any secret, for messages.
func (t *target) String() string {
	mode := "plaintext"
	switch {
	case t.Cert != "":
		mode = "mTLS"
	case t.TLS || t.CA != "":
		mode = "TLS"
	}
	return fmt.Sprintf("%s (%s)", t.Addr, mode)
}
