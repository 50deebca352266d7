// Package pki makes throwaway certificate authorities and certificates for
// tests that need real TLS: a CA whose PEM a peer trusts, and server or
// client certificates it issues into files, as an operator's would be.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority valid for an hour around now.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// PEM is the CA certificate, for a trust file.
	PEM []byte
}

// NewCA returns a fresh CA named name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Issue writes a leaf certificate for usage, naming dnsName (no IP
// address), and its PKCS#8 key into dir as name.crt and name.key, and
// returns their paths.
func (ca *CA) Issue(t testing.TB, dir, name, dnsName string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	return ca.IssueIdentity(t, dir, name, Identity{Subject: pkix.Name{CommonName: name}, DNSNames: []string{dnsName}}, usage)
}

// Identity is what a leaf certificate names: its subject and its DNS and
// URI subject alternative names.
type Identity struct {
	Subject  pkix.Name
	DNSNames []string
	URIs     []*url.URL
}

// IssueIdentity writes a leaf certificate for usage naming id, and its
// PKCS#8 key, into dir as name.crt and name.key, and returns their paths:
// a client certificate whose subject and SANs an authorization rule
// matches.
func (ca *CA) IssueIdentity(t testing.TB, dir, name string, id Identity, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	key := newKey(t)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      id.Subject,
		DNSNames:     id.DNSNames,
		URIs:         id.URIs,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	WriteFile(t, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	WriteFile(t, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	return certFile, keyFile
}

// WriteFile writes data to path, readable by its owner only.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// ClientTLS is a client's TLS configuration that trusts only ca and
// expects serverName; with certFile and keyFile (a certificate ca issued)
// it presents that client certificate, for mutual TLS.
func (ca *CA) ClientTLS(t testing.TB, serverName, certFile, keyFile string) *tls.Config {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	cfg := &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

// MTLS is what a mutual-TLS test needs, in files: a CA's certificate, a
// server certificate and a client certificate it issued.
type MTLS struct {
	CA                    *CA
	CAFile                string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// NewMTLS makes a fresh CA in dir and issues a server certificate naming
// serverName and a client certificate with common name clientName and DNS
// name clientDNS.
func NewMTLS(t testing.TB, dir, serverName, clientName, clientDNS string) *MTLS {
	t.Helper()
	m := &MTLS{CA: NewCA(t, "test CA"), CAFile: filepath.Join(dir, "ca.crt")}
	WriteFile(t, m.CAFile, m.CA.PEM)
	m.ServerCert, m.ServerKey = m.CA.Issue(t, dir, "server", serverName, x509.ExtKeyUsageServerAuth)
	m.ClientCert, m.ClientKey = m.CA.Issue(t, dir, clientName, clientDNS, x509.ExtKeyUsageClientAuth)
	return m
}
