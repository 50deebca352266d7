package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rmsd/rmsd/messages"
)

func TestObserveJobCountsStatesAndInFlight(t *testing.T) {
	m := New(Info{})
	fw := messages.TypeFirmwareUpdate
	for _, o := range []messages.JobObservation{
		{Type: fw, Leaf: true, State: messages.StateQueued},
		{Type: fw, Leaf: true, State: messages.StateQueued},
		{Type: fw, Leaf: true, State: messages.StateQueued},
		{Type: fw, Leaf: true, State: messages.StateCompleted},
		{Type: fw, Leaf: true, State: messages.StateFailed, Code: messages.ErrorTimeout},
	} {
		m.ObserveJob(o)
	}
	tests := []struct {
		give []string
		want float64
	}{
		{[]string{"firmware_update", "true", "queued", "none"}, 3},
		{[]string{"firmware_update", "true", "completed", "none"}, 1},
		{[]string{"firmware_update", "true", "failed", "timeout"}, 1},
	}
	for _, tt := range tests {
		if got := testutil.ToFloat64(m.workflows.WithLabelValues(tt.give...)); got != tt.want {
			t.Errorf("rms_workflows_counts_total%v = %v, want %v", tt.give, got, tt.want)
		}
	}
	if got := testutil.ToFloat64(m.inFlight.WithLabelValues("firmware_update", "true")); got != 1 {
		t.Errorf("rms_workflows_in_flight = %v, want 1", got)
	}
}

func TestWatchReadsSourcesAtScrapeTime(t *testing.T) {
	m := New(Info{})
	held := 3
	m.Watch(Sources{
		Jobs:            func() (int, int) { return 7, held },
		BMC:             func() (int, int) { return 2, 5 },
		DownloadBytes:   func() int64 { return 1024 },
		RegistryMailbox: func() int { return 6 },
	})
	held = 4
	want := `
# HELP rmsd_nodes_held Nodes (and whole racks) held by jobs and operations.
# TYPE rmsd_nodes_held gauge
rmsd_nodes_held 4
# HELP rmsd_bmc_operations_queued Hardware operations waiting for their device or a concurrency slot.
# TYPE rmsd_bmc_operations_queued gauge
rmsd_bmc_operations_queued 5
# HELP rmsd_firmware_download_bytes_total Firmware artifact bytes received from their sources.
# TYPE rmsd_firmware_download_bytes_total counter
rmsd_firmware_download_bytes_total 1024
# HELP rmsd_registry_mailbox_depth Messages waiting in the job registry's mailbox, the one being handled included.
# TYPE rmsd_registry_mailbox_depth gauge
rmsd_registry_mailbox_depth 6
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want),
		"rmsd_nodes_held", "rmsd_bmc_operations_queued", "rmsd_firmware_download_bytes_total", "rmsd_registry_mailbox_depth"); err != nil {
		t.Fatal(err)
	}
}
