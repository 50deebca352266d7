package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func newCertificateGauge() *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "rmsd_certificate_expiry_timestamp_seconds",
		Help: "When a certificate rmsd loaded expires (the earliest NotAfter of its file's chain), as a Unix time, by role: server (gRPC), client_ca, metrics, switch_client, switch_ca.",
	}, []string{"certificate"})
}

// CertificateExpiry records when the certificate rmsd uses as role
// expires. Call it whenever the certificate is (re)loaded.
func (m *Metrics) CertificateExpiry(role string, notAfter time.Time) {
	m.certificates.WithLabelValues(role).Set(float64(notAfter.Unix()))
}
