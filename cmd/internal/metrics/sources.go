package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Sources are the counters rmsd's own rmsd_* families read at scrape time.
// Each must return at once (atomic loads); a nil source is not exported.
type Sources struct {
	// Jobs returns the job records the registry keeps and the nodes (and
	// racks) jobs and operations hold.
	Jobs func() (tracked, held int)
	// BMC returns the hardware operations running and those waiting for
	// their device or a slot.
	BMC func() (inFlight, queued int)
	// DownloadBytes returns the firmware artifact bytes received so far.
	DownloadBytes func() int64
	// RegistryMailbox returns the messages waiting in the job registry's
	// mailbox (the one in hand included).
	RegistryMailbox func() int
	// AuditDropped returns the audit records that never reached the store
	// (queue full, store refused); they are in the audit log stream.
	AuditDropped func() uint64
	// QuarantinedJobs returns the jobs the registry holds quarantined:
	// cancelled, their workflow not returned, their nodes still held.
	QuarantinedJobs func() int
}

// Watch registers the rmsd_* families over s. Call it once.
func (m *Metrics) Watch(s Sources) {
	gauge := func(name, help string, read func() float64) {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, read))
	}
	if s.Jobs != nil {
		gauge("rmsd_jobs_tracked", "Job records the job registry keeps, finished ones included.",
			func() float64 { n, _ := s.Jobs(); return float64(n) })
		gauge("rmsd_nodes_held", "Nodes (and whole racks) held by jobs and operations.",
			func() float64 { _, n := s.Jobs(); return float64(n) })
	}
	if s.BMC != nil {
		gauge("rmsd_bmc_operations_in_flight", "Hardware operations (BMC or switch requests) running now.",
			func() float64 { n, _ := s.BMC(); return float64(n) })
		gauge("rmsd_bmc_operations_queued", "Hardware operations waiting for their device or a concurrency slot.",
			func() float64 { _, n := s.BMC(); return float64(n) })
	}
	if s.RegistryMailbox != nil {
		gauge("rmsd_registry_mailbox_depth", "Messages waiting in the job registry's mailbox, the one being handled included.",
			func() float64 { return float64(s.RegistryMailbox()) })
	}
	if s.QuarantinedJobs != nil {
		gauge("rmsd_jobs_quarantined", "Jobs quarantined: cancelled, their workflow has not returned, their nodes stay held (docs/operations.md \"Quarantined jobs\").",
			func() float64 { return float64(s.QuarantinedJobs()) })
	}
	if s.DownloadBytes != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "rmsd_firmware_download_bytes_total",
			Help: "Firmware artifact bytes received from their sources.",
		}, func() float64 { return float64(s.DownloadBytes()) }))
	}
	if s.AuditDropped != nil {
		m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "rmsd_audit_records_dropped_total",
			Help: "Audit records that never reached the store (queue full or store unavailable); they are in the audit log stream.",
		}, func() float64 { return float64(s.AuditDropped()) }))
	}
}
