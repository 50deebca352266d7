package sim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// authority issues the per-device TLS certificates of one fleet. It is
// generated at start and never written anywhere.
type authority struct {
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	// leafKey is shared by every device certificate: generating one key
	// per device would slow a 1,000-device start for no benefit.
	leafKey *ecdsa.PrivateKey
	pool    *x509.CertPool
}

func newAuthority() (*authority, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ca key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "rmsd simulator CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("self-sign ca: %w", err)
	}
	caCert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse ca: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate device key: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return &authority{caCert: caCert, caKey: caKey, leafKey: leafKey, pool: pool}, nil
}

// issue returns a TLS certificate for ip and dnsNames, signed by the fleet
// CA.
func (a *authority) issue(serial int64, ip string, dnsNames ...string) (tls.Certificate, error) {
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: ip},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP(ip)},
		DNSNames:     dnsNames,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.caCert, &a.leafKey.PublicKey, a.caKey)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("issue certificate for %s: %w", ip, err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: a.leafKey}, nil
}

// SiteMaterial is PEM material issued by a fleet's CA: the CA certificate,
// a certificate it signed and that certificate's private key (PKCS #8).
// The key is a secret: never log it.
type SiteMaterial struct {
	CA, Cert, Key []byte
}

// IssueSiteMaterial issues a certificate for server and client use naming
// ips and dnsNames, with a new key, signed by the fleet's CA: material a
// site installs on its switches (switch_cert_root) or gives rmsd as its
// own identity (client_tls_root). Switches of this fleet trust it only
// once installed; the CA lives as long as the fleet.
func (f *Fleet) IssueSiteMaterial(commonName string, ips, dnsNames []string) (SiteMaterial, error) {
	return f.ca.issueMaterial(commonName, ips, dnsNames)
}

func (a *authority) issueMaterial(commonName string, ips, dnsNames []string) (SiteMaterial, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return SiteMaterial{}, fmt.Errorf("generate site key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		return SiteMaterial{}, fmt.Errorf("site certificate serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: commonName},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     dnsNames,
	}
	for _, ip := range ips {
		if parsed := net.ParseIP(ip); parsed != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, parsed)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.caCert, &key.PublicKey, a.caKey)
	if err != nil {
		return SiteMaterial{}, fmt.Errorf("issue site certificate %s: %w", commonName, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return SiteMaterial{}, fmt.Errorf("encode site key: %w", err)
	}
	return SiteMaterial{
		CA:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.caCert.Raw}),
		Cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		Key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}, nil
}
