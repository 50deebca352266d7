// Command clusterbench measures what cluster mode costs and gains, as
// ratios within one run on one site (test/clustersite: three rmsd
// members on one PostgreSQL, the simulator's racks in this process):
//
//   - batch admission: concurrent callers each admit a batch over every
//     rack (a split batch, one cluster parent each), all through one
//     member vs spread over every member;
//   - whole-site power read: concurrent callers each read the power of
//     every node, all through one member vs spread over every member;
//   - a forwarded call vs the same call to the rack's owner (a job's
//     status);
//   - the time from a member's SIGKILL to every rack being served again
//     (the median of -kills).
//
// The two sides of each comparison run in alternating rounds, so that a
// change of the machine's load falls on both. It prints one line per
// figure with the medians, the ratio and the load average.
//
// It is a program, not a Go benchmark: the site is three processes that
// take seconds to start and settle, one kill-to-serving sample takes about
// a membership timeout and a half, and the figures are ratios of two
// sides measured together, none of which fits b.N's calibration.
//
// Usage (from the module root):
//
//	go run ./test/clusterbench [-rounds 15] [-callers 6] [-kills 3] [-rmsd path]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
)

func main() {
	var o options
	flag.IntVar(&o.rounds, "rounds", 15, "rounds of each side of a comparison")
	flag.IntVar(&o.callers, "callers", 6, "concurrent callers in the admission and power read rounds")
	flag.IntVar(&o.kills, "kills", 3, "member kills for the kill-to-serving figure")
	flag.IntVar(&o.racks, "racks", 6, "simulated racks")
	flag.StringVar(&o.rmsd, "rmsd", "", "rmsd binary to run (default: build ./cmd/rmsd)")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintf(os.Stderr, "clusterbench: %v\n", err)
		os.Exit(1)
	}
}

// options are the run's knobs.
type options struct {
	rounds, callers, kills, racks int
	rmsd                          string
}
