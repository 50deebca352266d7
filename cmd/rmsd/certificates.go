package main

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rmsd/rmsd/cmd/internal/metrics"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw/nvue"
)

// earliestExpiry returns the earliest NotAfter of the certificates in the
// PEM file at path: a chain is as good as its first link to expire.
func earliestExpiry(path string) (time.Time, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, fmt.Errorf("certificate expiry: %w", err)
	}
	var earliest time.Time
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return time.Time{}, fmt.Errorf("certificate expiry of %s: %w", path, err)
		}
		if earliest.IsZero() || c.NotAfter.Before(earliest) {
			earliest = c.NotAfter
		}
	}
	if earliest.IsZero() {
		return time.Time{}, fmt.Errorf("certificate expiry of %s: %w", path, errNoCertificate)
	}
	return earliest, nil
}

var errNoCertificate = errors.New("no PEM certificate")

// recordCertificate exports the expiry of the certificate file at path
// under role.
func recordCertificate(m *metrics.Metrics, role, path string) error {
	t, err := earliestExpiry(path)
	if err != nil {
		return err
	}
	m.CertificateExpiry(role, t)
	return nil
}

// recordServerCertificates exports the expiry of the gRPC server's
// certificate and of the CA its clients are checked against ([tls] cert
// and ca), which mTLS loaded at start.
func recordServerCertificates(m *metrics.Metrics, t config.TLS) error {
	if err := recordCertificate(m, "server", t.Cert); err != nil {
		return err
	}
	return recordCertificate(m, "client_ca", t.CA)
}

// recordSwitchCertificates exports the expiry of rmsd's identity towards
// switches and, when it came from client_tls_root, of the CA it checks
// switches against. nv is the NVUE policy built from them; a simulated
// identity (id) has no CA file.
func recordSwitchCertificates(m *metrics.Metrics, s config.Switches, nv nvue.Options, id *switchIdentity) error {
	if nv.ClientCertificate == nil {
		return nil
	}
	leaf := nv.ClientCertificate.Leaf
	if leaf == nil {
		c, err := x509.ParseCertificate(nv.ClientCertificate.Certificate[0])
		if err != nil {
			return fmt.Errorf("switch client certificate: %w", err)
		}
		leaf = c
	}
	m.CertificateExpiry("switch_client", leaf.NotAfter)
	if id != nil {
		return nil
	}
	return recordCertificate(m, "switch_ca", filepath.Join(s.ClientTLSRoot, s.DefaultSwitchDomain, "ca.pem"))
}
