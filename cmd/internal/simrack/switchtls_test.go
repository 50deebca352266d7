package simrack

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/config"
)

// The switch material names every switch and chains to the fleet's CA;
// rmsd's identity is a client certificate of the same CA. A second start
// replaces the first's files and widened modes are narrowed again; a
// directory that is a link is refused.
func TestSwitchTLSIsIssuedByTheFleetCAAndReplacedPrivately(t *testing.T) {
	cfg := config.Default().Simulator
	cfg.BMCPort, cfg.NVUEPort, cfg.SSHPort, cfg.NMXPort, cfg.GNMIPort = 0, 0, 0, 0, 0
	cfg.Network = 89
	fleet, err := Start(context.Background(), cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()

	m, err := IssueSwitchTLS(fleet)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "simulated-switch-tls")
	if err := WriteSwitchTLS(dir, "d", m); err != nil {
		t.Fatal(err)
	}
	roots := SwitchTLSRoots(dir)
	read := func(root, name string) []byte {
		b, err := os.ReadFile(filepath.Join(root, "d", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pair, err := tls.X509KeyPair(read(roots.CertRoot, "client.pem"), read(roots.CertRoot, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(pair.Certificate[0])
	for _, n := range fleet.Nodes() {
		if n.Switch == nil {
			continue
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: fleet.CertPool(), DNSName: n.Host.IP,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Fatalf("switch certificate for %s: %v", n.ID, err)
		}
	}
	client, err := tls.X509KeyPair(read(roots.ClientRoot, "client.pem"), read(roots.ClientRoot, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	cleaf, _ := x509.ParseCertificate(client.Certificate[0])
	if _, err := cleaf.Verify(x509.VerifyOptions{Roots: fleet.CertPool(), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("rmsd's identity: %v", err)
	}

	// A restart issues new material over the old, private again.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	again, err := IssueSwitchTLS(fleet)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSwitchTLS(dir, "d", again); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(read(roots.CertRoot, "client.key"), m.Switch.Key) || !bytes.Equal(read(roots.CertRoot, "client.key"), again.Switch.Key) {
		t.Fatal("the second write did not replace the key")
	}
	for _, p := range []string{dir, roots.CertRoot, roots.ClientRoot, filepath.Join(roots.CertRoot, "d")} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want 0700", p, fi, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(roots.ClientRoot, "d", "client.key")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("client.key: %v, %v; want 0600", fi, err)
	}

	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	if err := WriteSwitchTLS(link, "d", m); err == nil {
		t.Fatal("a linked directory was written into")
	}
}
