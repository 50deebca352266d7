package main

import (
	"cmp"
	"slices"

	"github.com/rmsd/rmsd/bench/procstat"
)

// residentSamples are one side's resident sets, one taken after each
// warm round. A single reading is a poor figure for a Go process: its
// heap rises and falls with each collection cycle and the scavenger hands
// pages back to the OS gradually, so two readings a few seconds apart
// differ by several MiB. The figure reported is the median of the rounds,
// with their range beside it.
type residentSamples []procstat.Resident

// take appends the resident set of process pid.
func (s *residentSamples) take(pid int) error {
	r, err := procstat.ResidentSet(pid)
	if err != nil {
		return err
	}
	*s = append(*s, r)
	return nil
}

// summary is the sample of median total and the least and greatest
// totals. The median is a sample actually taken, its parts consistent;
// of an even count it is the upper middle one, as medianDur's.
func (s residentSamples) summary() (med procstat.Resident, lo, hi int64) {
	if len(s) == 0 {
		return procstat.Resident{}, 0, 0
	}
	sorted := slices.SortedFunc(slices.Values(s), func(a, b procstat.Resident) int { return cmp.Compare(a.Total, b.Total) })
	return sorted[len(sorted)/2], sorted[0].Total, sorted[len(sorted)-1].Total
}
