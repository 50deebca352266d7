package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// commitBuckets, in seconds, reach from a local SQLite commit (a fraction
// of a millisecond) to the store timeout's order (tens of seconds).
var commitBuckets = []float64{0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

func newCommitHistogram(persistence string) *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "rmsd_journal_commit_seconds",
		Help: "Time to commit one group of job journal events to the store, by outcome (ok, or error when the store failed or passed its timeout).",
		// One store per process: the label lets a fleet's dashboards
		// compare SQLite and PostgreSQL daemons.
		ConstLabels: prometheus.Labels{"store": persistence},
		Buckets:     commitBuckets,
	}, []string{"outcome"})
}

// ObserveCommit records one attempt to commit the job journal; it is the
// job engine's OnCommit.
func (m *Metrics) ObserveCommit(elapsed time.Duration, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	m.commits.WithLabelValues(outcome).Observe(elapsed.Seconds())
}
