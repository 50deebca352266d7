package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/rmsd/rmsd/messages"
)

// TestNewExportsBuildInfoAndTheRuntimeCollectors: rmsd_build_info carries
// the version, commit and Go version, and the process_* and go_* families
// are there for the usual dashboards.
func TestNewExportsBuildInfoAndTheRuntimeCollectors(t *testing.T) {
	m := New(Info{BuildVersion: "v1.2.3", GitSHA: "0123abcd", GoVersion: "go1.99"})
	want := `
# HELP rmsd_build_info The running rmsd's version, commit and Go version (always 1).
# TYPE rmsd_build_info gauge
rmsd_build_info{commit="0123abcd",goversion="go1.99",version="v1.2.3"} 1
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want), "rmsd_build_info"); err != nil {
		t.Fatal(err)
	}
	families, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range families {
		names[f.GetName()] = true
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds"} {
		if !names[name] {
			t.Errorf("no %s family", name)
		}
	}
}

// TestObserveJobRecordsTheDurationOfEndedJobs: a sealed job's duration
// lands in rmsd_job_duration_seconds under its type and outcome; an
// admission observes nothing.
func TestObserveJobRecordsTheDurationOfEndedJobs(t *testing.T) {
	m := New(Info{})
	fw := messages.TypeFirmwareUpdate
	for _, o := range []messages.JobObservation{
		{Type: fw, Leaf: true, State: messages.StateQueued},
		{Type: fw, Leaf: true, State: messages.StateCompleted, Duration: 90 * time.Second},
		{Type: fw, Leaf: true, State: messages.StateCompleted, Duration: 30 * time.Minute},
		{Type: fw, Leaf: true, State: messages.StateFailed, Code: messages.ErrorTimeout, Duration: 2 * time.Second},
	} {
		m.ObserveJob(o)
	}
	histogram := func(outcome string) *dto.Histogram {
		var metric dto.Metric
		if err := m.jobs.WithLabelValues("firmware_update", "true", outcome).(interface{ Write(*dto.Metric) error }).Write(&metric); err != nil {
			t.Fatal(err)
		}
		return metric.GetHistogram()
	}
	if h := histogram("completed"); h.GetSampleCount() != 2 || h.GetSampleSum() != 90+1800 {
		t.Errorf("completed: %d samples summing %vs, want 2 summing 1890s", h.GetSampleCount(), h.GetSampleSum())
	}
	if h := histogram("failed"); h.GetSampleCount() != 1 || h.GetSampleSum() != 2 {
		t.Errorf("failed: %d samples summing %vs, want 1 of 2s", h.GetSampleCount(), h.GetSampleSum())
	}
}
