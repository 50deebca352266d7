package metrics

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rmsd/rmsd/hw"
)

// hardwareBuckets, in seconds, reach from a BMC on the same switch (a few
// milliseconds) to a request that runs into its 30 s timeout, and an upload.
var hardwareBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 600}

// hardwareFamilies are the southbound request families: latency by
// protocol and device kind, and failures by the same and a class. No label
// names a device or a URL, so their size is bounded (two protocols, four
// kinds, three classes).
type hardwareFamilies struct {
	latency *prometheus.HistogramVec
	errors  *prometheus.CounterVec
	// observers keeps each (protocol, kind) latency series once asked
	// for: every southbound request is observed, and looking a series up
	// by its label values hashes them and takes the vector's lock.
	observers *[len(hardwareProtocols)][hw.KindPowerShelf + 1]atomic.Pointer[prometheus.Observer]
}

// hardwareProtocols are the protocols whose latency series are kept in
// hardwareFamilies.observers; another protocol is looked up each time.
var hardwareProtocols = [...]string{"redfish", "nvue"}

func newHardwareFamilies() hardwareFamilies {
	return hardwareFamilies{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rmsd_hardware_request_seconds",
			Help:    "Time from sending a southbound HTTP request (Redfish to a BMC, NVUE to a switch) to its response headers or its failure, by protocol and device kind.",
			Buckets: hardwareBuckets,
		}, []string{"protocol", "device_kind"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rmsd_hardware_request_errors_total",
			Help: "Southbound HTTP requests that failed, by protocol, device kind and class: transport (no answer: refused, reset, TLS, timeout), 5xx or 4xx (the device's answer).",
		}, []string{"protocol", "device_kind", "class"}),
		observers: new([len(hardwareProtocols)][hw.KindPowerShelf + 1]atomic.Pointer[prometheus.Observer]),
	}
}

// latencyOf returns the latency series of protocol and kind.
func (h hardwareFamilies) latencyOf(protocol string, kind hw.Kind) prometheus.Observer {
	p := -1
	for i, name := range hardwareProtocols {
		if name == protocol {
			p = i
		}
	}
	if p < 0 || kind < 0 || int(kind) >= len(h.observers[p]) {
		return h.latency.WithLabelValues(protocol, kind.String())
	}
	slot := &h.observers[p][kind]
	if o := slot.Load(); o != nil {
		return *o
	}
	o := h.latency.WithLabelValues(protocol, kind.String())
	slot.Store(&o)
	return o
}

// ObserveHardware records one southbound request; it is the Redfish and
// NVUE pools' Options.Observe.
func (m *Metrics) ObserveHardware(s hw.RequestSample) {
	m.hardware.latencyOf(s.Protocol, s.Kind).Observe(s.Elapsed.Seconds())
	class := ""
	switch {
	case s.Err != nil:
		class = "transport"
	case s.Status >= 500:
		class = "5xx"
	case s.Status >= 400:
		class = "4xx"
	}
	if class != "" {
		m.hardware.errors.WithLabelValues(s.Protocol, s.Kind.String(), class).Inc()
	}
}
