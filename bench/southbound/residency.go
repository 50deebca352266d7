package main

import (
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

// median is the sample of median total (of an even count, the lower of
// the two middle ones: a sample actually taken, its parts consistent).
func (s residentSamples) median() procstat.Resident {
	if len(s) == 0 {
		return procstat.Resident{}
	}
	sorted := slices.SortedFunc(slices.Values(s), func(a, b procstat.Resident) int { return int(a.Total - b.Total) })
	return sorted[(len(sorted)-1)/2]
}

// span is the least and the greatest total.
func (s residentSamples) span() (lo, hi int64) {
	for i, r := range s {
		if i == 0 || r.Total < lo {
			lo = r.Total
		}
		if r.Total > hi {
			hi = r.Total
		}
	}
	return lo, hi
}
