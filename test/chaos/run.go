package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"time"

	"github.com/rmsd/rmsd/grpc/adminpb"
)

// run starts the daemon, loads it while killing actors, checks the outcome
// and stops the daemon.
func run(ctx context.Context, o options) (report, error) {
	dir, err := os.MkdirTemp("", "rmsd-chaos-")
	if err != nil {
		return report{}, err
	}
	d, err := startDaemon(ctx, dir, o)
	if err != nil {
		return report{}, err
	}
	if o.verbose {
		fmt.Fprintf(os.Stderr, "chaos: rmsd log %s\n", d.logPath)
	}
	rep, err := exercise(ctx, d, o)
	stopErr := d.stop()
	if err != nil {
		return rep, err
	}
	if rep.daemonErr == nil {
		rep.daemonErr = stopErr
	}
	if rep.clean() && !o.keep {
		_ = os.RemoveAll(dir)
	}
	return rep, nil
}

// exercise is the chaos itself: load and kills for o.duration, then the
// checks.
func exercise(ctx context.Context, d *daemon, o options) (report, error) {
	chaos, stop := context.WithTimeout(ctx, o.duration)
	defer stop()
	l := newLoad(d, o)
	var wg sync.WaitGroup
	l.start(chaos, &wg)
	k := &killer{admin: func(*rand.Rand) adminpb.AdminClient { return d.admin }, rng: rand.New(rand.NewPCG(o.seed, 2)), byKind: map[string]int{}}
	k.run(chaos, o.verbose)
	wg.Wait()
	if o.verbose {
		fmt.Fprintf(os.Stderr, "chaos: load ended (%d cold reboots, %d power batches), %d kills; checking\n",
			len(l.admitted()), l.batches.Load(), k.total)
	}
	rep := report{kills: k.total, killsByKind: k.byKind}
	if err := check(ctx, d, l.admitted(), o.settle, o.verbose, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// settleStep is how often the checks poll jobs that are not yet terminal.
const settleStep = 250 * time.Millisecond
