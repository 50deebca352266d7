package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func newDrainGauge() prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "rmsd_drain_start_timestamp_seconds",
		Help: "When the shutdown drain in progress began (SIGTERM: no new jobs, running jobs cancelled and awaited), as a Unix time; 0 while rmsd is not draining.",
	})
}

// DrainStarted records that the shutdown drain began at t. The listener
// keeps serving until the drain ends, so an alert can see a drain that
// lasts too long.
func (m *Metrics) DrainStarted(t time.Time) {
	m.drain.Set(float64(t.Unix()))
}
