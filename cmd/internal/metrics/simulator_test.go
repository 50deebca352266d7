package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestWatchSimulatorReadsOverlapsAtScrapeTime(t *testing.T) {
	m := New(Info{})
	overlaps := 0
	m.WatchSimulator(func() int { return overlaps })
	overlaps = 2
	want := `
# HELP rmsd_simulator_overlaps_total Pairs of jobs or operation leases the rack simulator saw act on one device at the same time (rmsd --simulate only; always 0 when exclusion holds).
# TYPE rmsd_simulator_overlaps_total counter
rmsd_simulator_overlaps_total 2
`
	if err := testutil.GatherAndCompare(m.reg, strings.NewReader(want), "rmsd_simulator_overlaps_total"); err != nil {
		t.Fatal(err)
	}
}
