package metrics

import (
	"errors"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/rmsd/rmsd/hw"
)

// TestObserveHardwareCountsEachRequestUnderItsProtocolAndKind: requests
// land in the latency series of their protocol and device kind, however
// many go to the same series (the first finds it, the rest reuse it), a
// protocol or kind outside the kept ones still lands under its own labels,
// and failures are counted by class.
func TestObserveHardwareCountsEachRequestUnderItsProtocolAndKind(t *testing.T) {
	m := New(Info{})
	sent := map[[2]string]uint64{}
	observe := func(protocol string, kind hw.Kind, n int, status int, err error) {
		for range n {
			m.ObserveHardware(hw.RequestSample{Protocol: protocol, Kind: kind, Elapsed: 3 * time.Millisecond, Status: status, Err: err})
		}
		sent[[2]string{protocol, kind.String()}] += uint64(n)
	}
	observe("redfish", hw.KindCompute, 5, 200, nil)
	observe("redfish", hw.KindPowerShelf, 3, 503, nil)
	observe("nvue", hw.KindSwitch, 2, 404, nil)
	observe("redfish", hw.KindUnknown, 1, 0, errors.New("refused"))
	observe("ssh", hw.KindSwitch, 4, 200, nil)
	observe("redfish", hw.Kind(42), 1, 200, nil)
	for labels, want := range sent {
		var metric dto.Metric
		if err := m.hardware.latency.WithLabelValues(labels[0], labels[1]).(interface{ Write(*dto.Metric) error }).Write(&metric); err != nil {
			t.Fatal(err)
		}
		h := metric.GetHistogram()
		if h.GetSampleCount() != want {
			t.Errorf("rmsd_hardware_request_seconds{protocol=%q, device_kind=%q} counts %d requests, want %d", labels[0], labels[1], h.GetSampleCount(), want)
		}
		if got, wantSum := h.GetSampleSum(), float64(want)*0.003; got < wantSum*0.999 || got > wantSum*1.001 {
			t.Errorf("rmsd_hardware_request_seconds{protocol=%q, device_kind=%q} sums %v s, want %v", labels[0], labels[1], got, wantSum)
		}
	}
	for _, c := range []struct {
		protocol, kind, class string
		want                  float64
	}{
		{"redfish", "power_shelf", "5xx", 3},
		{"nvue", "switch", "4xx", 2},
		{"redfish", "unknown", "transport", 1},
	} {
		var metric dto.Metric
		if err := m.hardware.errors.WithLabelValues(c.protocol, c.kind, c.class).Write(&metric); err != nil {
			t.Fatal(err)
		}
		if got := metric.GetCounter().GetValue(); got != c.want {
			t.Errorf("rmsd_hardware_request_errors_total{%s, %s, %s} = %v, want %v", c.protocol, c.kind, c.class, got, c.want)
		}
	}
}
