package metrics

import "github.com/prometheus/client_golang/prometheus"

// WatchSimulator registers rmsd_simulator_overlaps_total over overlaps,
// which returns how many pairs of holders (jobs or operation leases) the
// in-process rack simulator saw act on one device at the same time. Only
// `rmsd --simulate` calls it, once; the chaos run scrapes it.
func (m *Metrics) WatchSimulator(overlaps func() int) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "rmsd_simulator_overlaps_total",
		Help: "Pairs of jobs or operation leases the rack simulator saw act on one device at the same time (rmsd --simulate only; always 0 when exclusion holds).",
	}, func() float64 { return float64(overlaps()) }))
}
