package switchcert

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rmsd/rmsd/hw"
)

// Material is one domain's certificate material for switches: the CA that
// signs clients, and the switch's own certificate and private key.
type Material struct {
	Domain string
	CA     []byte
	Cert   []byte
	Key    hw.Secret
}

// Material file names under switch_cert_root/<domain>/.
const (
	caFile   = "ca.pem"
	certFile = "client.pem"
	keyFile  = "client.key"
)

// maxMaterialFile bounds each material file (PEM files are a few KiB).
const maxMaterialFile = 1 << 20

// ErrNoMaterial reports material that is missing or unusable.
var ErrNoMaterial = errors.New("switchcert: certificate material unavailable")

// EffectiveDomain is the domain a request's material is read for: the
// request's, else the configured default (upstream's effective_domain).
func EffectiveDomain(requested, def string) string {
	if requested != "" {
		return requested
	}
	return def
}

// CheckDomain refuses a domain that names no directory under the roots:
// none at all, or not a single path element.
func CheckDomain(domain string) error {
	switch {
	case domain == "":
		return fmt.Errorf("%w: no domain in the request and no [switches] default_switch_domain", ErrNoMaterial)
	case domain == "." || domain == ".." || strings.ContainsAny(domain, `/\`):
		return fmt.Errorf("%w: domain %q is not a directory name", ErrNoMaterial, domain)
	}
	return nil
}

// LoadMaterial reads root/<domain>/{ca.pem, client.pem, client.key}. The
// domain must be a single path element. Errors name files, never contents.
func LoadMaterial(root, domain string) (Material, error) {
	if err := CheckDomain(domain); err != nil {
		return Material{}, err
	}
	if root == "" {
		return Material{}, fmt.Errorf("%w: [switches] switch_cert_root is not set", ErrNoMaterial)
	}
	m := Material{Domain: domain}
	dir := filepath.Join(root, domain)
	for _, f := range []struct {
		name string
		into *[]byte
	}{{caFile, &m.CA}, {certFile, &m.Cert}, {keyFile, nil}} {
		p := filepath.Join(dir, f.name)
		info, err := os.Stat(p)
		switch {
		case err != nil:
			return Material{}, fmt.Errorf("%w: %s/%s: %v", ErrNoMaterial, domain, f.name, errors.Unwrap(err))
		case !info.Mode().IsRegular():
			return Material{}, fmt.Errorf("%w: %s/%s is not a regular file", ErrNoMaterial, domain, f.name)
		case info.Size() == 0 || info.Size() > maxMaterialFile:
			return Material{}, fmt.Errorf("%w: %s/%s has %d bytes (1 to %d allowed)", ErrNoMaterial, domain, f.name, info.Size(), maxMaterialFile)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return Material{}, fmt.Errorf("%w: %s/%s: %v", ErrNoMaterial, domain, f.name, errors.Unwrap(err))
		}
		if f.into != nil {
			*f.into = b
		} else {
			m.Key = hw.NewSecret(string(b))
		}
	}
	return m, nil
}
