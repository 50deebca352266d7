package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rmsd/rmsd/test/clustersite"
)

// membershipTimeout is the members' [cluster] membership_timeout_seconds
// (the cluster site tests' value).
const membershipTimeout = 6

// run starts the site, waits for every rack to be served and measures.
func run(ctx context.Context, o options) error {
	dir, err := os.MkdirTemp("", "rmsd-clusterbench-")
	if err != nil {
		return err
	}
	site, err := clustersite.Start(ctx, clustersite.Options{
		Racks: o.racks, Members: 3, Binary: o.rmsd, Dir: dir,
		PostgresURL:       os.Getenv("RMSD_TEST_POSTGRES_URL"),
		MembershipTimeout: membershipTimeout, DrainTimeout: 10,
	})
	if err != nil {
		return fmt.Errorf("start the site (files in %s): %w", dir, err)
	}
	defer site.Close()
	if err := untilServed(ctx, site); err != nil {
		return err
	}
	b := &bench{site: site, o: o}
	for _, step := range []func(context.Context) error{b.admission, b.powerRead, b.forwarded, b.killToServing} {
		if err := step(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "clusterbench: the members' logs are in %s\n", dir)
			return err
		}
	}
	_ = os.RemoveAll(dir)
	return nil
}

// bench is one run's site and options.
type bench struct {
	site *clustersite.Site
	o    options
	// lastBatch is a batch the admission rounds admitted: the forwarded
	// call reads one of its children.
	lastBatch string
}

// untilServed waits until every rack's service is open on a member.
func untilServed(ctx context.Context, site *clustersite.Site) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		left := site.NotServing()
		if len(left) == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("racks %v not served within 2m", left)
		}
		clustersite.Pause(ctx, 50*time.Millisecond)
	}
}

// median of ds.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// loadAverage is the first field of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(b))[0]
}

// report prints one comparison: the medians of both sides and b/a.
func report(what, aName string, a []time.Duration, bName string, b []time.Duration) {
	ma, mb := median(a), median(b)
	fmt.Printf("%s: %s %s, %s %s (median of %d), ratio %.2f, load average %s\n",
		what, aName, ma.Round(time.Microsecond*100), bName, mb.Round(time.Microsecond*100), len(a),
		float64(mb)/float64(ma), loadAverage())
}
