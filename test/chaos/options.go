package main

import (
	"fmt"
	"time"
)

// options are the chaos run's knobs.
type options struct {
	duration, settle time.Duration
	racks, callers   int
	rmsd             string
	seed             uint64
	verbose, keep    bool
	// cluster runs a three-member cluster instead of one daemon
	// (cluster.go); members is its size.
	cluster bool
	members int
}

// report is what a run found.
type report struct {
	jobs, kills, lost, stuck, held int
	// overlaps counts pairs of holders the simulator saw act on one
	// device at the same time.
	overlaps    int
	killsByKind map[string]int
	// memberKills and memberRestarts count, in a cluster run, the members
	// killed with SIGKILL and the members started again (after a kill or
	// a SIGTERM).
	memberKills, memberRestarts int
	daemonErr                   error // the daemon stopped badly or stopped answering
	cluster                     bool
}

// String is the one summary line.
func (r report) String() string {
	s := fmt.Sprintf("chaos: %d jobs, %d kills, %d lost, %d stuck, %d held nodes, %d overlaps",
		r.jobs, r.kills, r.lost, r.stuck, r.held, r.overlaps)
	if r.cluster {
		s += fmt.Sprintf(", %d member kills, %d member restarts", r.memberKills, r.memberRestarts)
	}
	if r.daemonErr != nil {
		s += fmt.Sprintf(" (daemon: %v)", r.daemonErr)
	}
	return s
}

func (r report) clean() bool {
	return r.lost == 0 && r.stuck == 0 && r.held == 0 && r.overlaps == 0 && r.daemonErr == nil && r.jobs > 0
}
