package main

import (
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/rmsd/rmsd/test/pki"
)

// TestMetricsExportCertificateExpiry starts rmsd under mTLS with its
// metrics over TLS, from certificates a test CA issued into files as an
// operator's would be: /metrics (read over HTTPS, trusting that CA) names
// when the server certificate, the client CA and the metrics listener's
// certificate expire.
func TestMetricsExportCertificateExpiry(t *testing.T) {
	dir := t.TempDir()
	ca := pki.NewCA(t, "rmsd test CA")
	caFile := filepath.Join(dir, "ca.pem")
	pki.WriteFile(t, caFile, ca.PEM)
	certFile, keyFile := ca.Issue(t, dir, "server", "localhost", x509.ExtKeyUsageServerAuth)
	leaf, err := earliestExpiry(certFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`
port = 0
[server]
bind_address = "127.0.0.1"
drain_delay_seconds = 0
[metrics]
port = 0
tls = true
[tls]
cert = %q
key = %q
ca = %q
`, certFile, keyFile, caFile)
	d := startRun(t, nil, "--config", writeFile(t, cfg))
	addr, ok := logLine(t, d.stdout.String(), "metrics serving")["addr"].(string)
	if !ok {
		t.Fatal("no address in the metrics serving line")
	}

	tr := &http.Transport{TLSClientConfig: ca.ClientTLS(t, "localhost", "", "")}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Get("https://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("scrape over TLS: %v", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for role, want := range map[string]time.Time{"server": leaf, "client_ca": ca.Cert.NotAfter, "metrics": leaf} {
		m := sample(families, "rmsd_certificate_expiry_timestamp_seconds", map[string]string{"certificate": role})
		if m == nil {
			t.Errorf("no expiry of the %s certificate in %v", role, families["rmsd_certificate_expiry_timestamp_seconds"])
			continue
		}
		if got := int64(m.GetGauge().GetValue()); got != want.Unix() {
			t.Errorf("%s certificate expires at %d, want %d (%s)", role, got, want.Unix(), want)
		}
	}
	if n := len(families["rmsd_certificate_expiry_timestamp_seconds"].GetMetric()); n != 3 {
		t.Errorf("%d certificates exported, want 3 (no switch identity is configured)", n)
	}
	stopRun(t, d)
}

// TestEarliestExpiryOfAChain: a chain file expires with its first link;
// a file without a certificate is an error.
func TestEarliestExpiryOfAChain(t *testing.T) {
	dir := t.TempDir()
	ca := pki.NewCA(t, "chain CA")
	certFile, _ := ca.Issue(t, dir, "leaf", "leaf.example", x509.ExtKeyUsageServerAuth)
	leafPEM, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	chain := filepath.Join(dir, "chain.pem")
	pki.WriteFile(t, chain, append(append([]byte{}, leafPEM...), ca.PEM...))
	got, err := earliestExpiry(chain)
	if err != nil {
		t.Fatal(err)
	}
	want := ca.Cert.NotAfter
	if leafT, _ := earliestExpiry(certFile); leafT.Before(want) {
		want = leafT
	}
	if !got.Equal(want) {
		t.Errorf("chain expires %s, want the earliest link's %s", got, want)
	}
	empty := filepath.Join(dir, "empty.pem")
	pki.WriteFile(t, empty, []byte("not a certificate\n"))
	if _, err := earliestExpiry(empty); err == nil {
		t.Error("a file without a certificate gave no error")
	}
}
