// Command chaos drives a real `rmsd --simulate` through its public API while
// killing the job engine's actors through the admin service, then checks
// that nothing was lost: every admitted job reached a terminal state, none
// is stuck, no node stays held, no two workflows (jobs or operation leases)
// ever acted on one device at the same time (the simulator's count,
// rmsd_simulator_overlaps_total on the daemon's /metrics), and the daemon
// still answers. It prints one summary line,
//
//	chaos: N jobs, K kills, L lost, S stuck, H held nodes, O overlaps
//
// and exits 1 unless L, S, H and O are all zero and the daemon stopped
// cleanly.
//
// Usage (from the module root; `task chaos` runs it):
//
//	go run ./test/chaos [-duration 45s] [-racks 4] [-callers 4] [-rmsd path]
//	go run ./test/chaos -cluster [-members 3] [-racks 6] ...
//
// Without -rmsd it builds ./cmd/rmsd first.
//
// With -cluster it runs rmsd cluster members instead (test/clustersite:
// one private PostgreSQL database on the server of RMSD_TEST_POSTGRES_URL,
// default 127.0.0.1:5432, and the simulator in this process). The load
// goes through every member (cold reboots of one rack, switch batches over
// several racks, power calls, status polls of acknowledged jobs), actors
// are killed through each member's admin service, and members are killed
// (SIGKILL, started again after a pause) or stopped (SIGTERM, started
// again at once). A job interrupted by a member's loss ends Failed and
// counts as terminal. The line adds the member kills and restarts:
//
//	chaos: N jobs, K kills, L lost, S stuck, H held nodes, O overlaps, M member kills, R member restarts
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 45*time.Second, "how long to load the daemon and kill actors")
	flag.DurationVar(&o.settle, "settle", 90*time.Second, "how long admitted jobs may take to end once the chaos stops")
	flag.IntVar(&o.racks, "racks", 4, "simulated racks")
	flag.IntVar(&o.callers, "callers", 4, "concurrent callers per kind of load")
	flag.StringVar(&o.rmsd, "rmsd", "", "rmsd binary to run (default: build ./cmd/rmsd)")
	flag.Uint64Var(&o.seed, "seed", uint64(time.Now().UnixNano()), "random seed")
	flag.BoolVar(&o.verbose, "v", false, "print progress and the daemon's log path")
	flag.BoolVar(&o.keep, "keep", false, "keep the daemon's log and files even when the run is clean")
	flag.BoolVar(&o.cluster, "cluster", false, "run a cluster of rmsd members on one PostgreSQL (test/clustersite) and kill members too")
	flag.IntVar(&o.members, "members", 3, "cluster members (with -cluster)")
	flag.Parse()
	if o.cluster {
		racksSet := false
		flag.Visit(func(f *flag.Flag) { racksSet = racksSet || f.Name == "racks" })
		if !racksSet {
			o.racks = 6
		}
	}

	ctx := context.Background()
	runner := run
	if o.cluster {
		runner = runCluster
	}
	report, err := runner(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "chaos: %v\n", err)
		os.Exit(1)
	}
	fmt.Println(report.String())
	if !report.clean() {
		os.Exit(1)
	}
}
