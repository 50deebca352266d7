package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/test/clustersite"
)

// Cluster run timings: the members' membership timeout (as the cluster
// site tests) and drain window (short, so that a SIGTERM restart ends
// within a chaos run).
const (
	clusterMembershipTimeout = 6
	clusterDrainTimeout      = 10
)

// runCluster is the chaos run of a cluster (-cluster): o.members rmsd
// members on one PostgreSQL serve o.racks simulated racks; the load goes
// through every member while engine actors are killed through each
// member's admin service and members are killed (SIGKILL) or stopped
// (SIGTERM) and started again; then the checks.
func runCluster(ctx context.Context, o options) (report, error) {
	dir, err := os.MkdirTemp("", "rmsd-chaos-cluster-")
	if err != nil {
		return report{}, err
	}
	site, err := clustersite.Start(ctx, clustersite.Options{
		Racks: o.racks, Members: o.members, Binary: o.rmsd, Dir: dir,
		PostgresURL:       os.Getenv("RMSD_TEST_POSTGRES_URL"),
		MembershipTimeout: clusterMembershipTimeout, DrainTimeout: clusterDrainTimeout,
	})
	if err != nil {
		return report{}, fmt.Errorf("start the cluster site (files in %s): %w", dir, err)
	}
	defer site.Close()
	if o.verbose {
		fmt.Fprintf(os.Stderr, "chaos: cluster of %d members, logs in %s\n", o.members, dir)
	}
	rep := exerciseCluster(ctx, site, o)
	rep.cluster = true
	for i, m := range site.Members {
		if !m.Up() {
			continue
		}
		if err := site.Stop(i); err != nil && rep.daemonErr == nil {
			rep.daemonErr = err
		}
	}
	if rep.clean() && !o.keep {
		_ = os.RemoveAll(dir)
	} else {
		fmt.Fprintf(os.Stderr, "chaos: the members' logs are in %s\n", dir)
	}
	return rep, nil
}

// exerciseCluster loads the site and kills actors and members for
// o.duration, starts every member that is down, then checks.
func exerciseCluster(ctx context.Context, site *clustersite.Site, o options) report {
	chaos, stop := context.WithTimeout(ctx, o.duration)
	defer stop()
	l := newClusterLoad(site, o)
	var wg sync.WaitGroup
	l.start(chaos, &wg)
	mc := &memberChaos{site: site, rng: rand.New(rand.NewPCG(o.seed, 3)), verbose: o.verbose}
	wg.Add(1)
	go func() { defer wg.Done(); mc.run(chaos) }()
	k := &killer{admin: func(rng *rand.Rand) adminpb.AdminClient {
		if m := upMember(site, rng); m != nil {
			return m.Admin()
		}
		return nil
	}, rng: rand.New(rand.NewPCG(o.seed, 2)), byKind: map[string]int{}}
	k.run(chaos, o.verbose)
	wg.Wait()
	rep := report{kills: k.total, killsByKind: k.byKind, memberKills: mc.kills, memberRestarts: mc.restarts}
	if mc.err != nil {
		rep.daemonErr = mc.err
		return rep
	}
	// Every member serves again for the checks.
	for i, m := range site.Members {
		if m.Up() {
			continue
		}
		if by, _ := m.ExitedByItself(); by {
			if _, err := mc.fenced(ctx, i); err != nil {
				rep.daemonErr = err
				return rep
			}
			rep.memberRestarts++
			continue
		}
		if err := site.Restart(i); err != nil {
			rep.daemonErr = err
			return rep
		}
		rep.memberRestarts++
	}
	if o.verbose {
		fmt.Fprintf(os.Stderr, "chaos: load ended (%d jobs acknowledged, %d power calls), %d kills, %d member kills, %d member restarts; checking\n",
			len(l.admitted()), l.calls.Load(), k.total, mc.kills, rep.memberRestarts)
	}
	checkCluster(ctx, site, l.admitted(), o.settle, o.verbose, &rep)
	return rep
}

// upMember returns a random member that serves now, or nil.
func upMember(site *clustersite.Site, rng *rand.Rand) *clustersite.Member {
	var up []*clustersite.Member
	for _, m := range site.Members {
		if m.Up() {
			up = append(up, m)
		}
	}
	if len(up) == 0 {
		return nil
	}
	return up[rng.IntN(len(up))]
}

// rmsClient is upMember's RackManager client, or nil.
func rmsClient(site *clustersite.Site, rng *rand.Rand) rmspb.RackManagerClient {
	if m := upMember(site, rng); m != nil {
		return m.RMS()
	}
	return nil
}

// memberChaos kills and restarts members until its context ends, one at a
// time: a SIGKILL then, after a pause, a start (a crash and its
// supervisor's restart), or a SIGTERM and a start at once (a rolling
// upgrade's step). The first blow is a SIGKILL and the second a SIGTERM,
// the others either at random, so that a short run (CI's) has both.
type memberChaos struct {
	site    *clustersite.Site
	rng     *rand.Rand
	verbose bool
	// kills and terms count the SIGKILLs and SIGTERMs, restarts every
	// start (a fenced member's too).
	kills, terms, restarts int
	err                    error // a member that would not stop cleanly or start
}

func (c *memberChaos) run(ctx context.Context) {
	// Leave the cluster time to place every rack before the first blow.
	pause(ctx, time.Duration(clusterMembershipTimeout)*time.Second/2)
	for ctx.Err() == nil {
		i := c.rng.IntN(len(c.site.Members))
		id := c.site.Members[i].ID
		if fenced, err := c.fenced(ctx, i); fenced || err != nil {
			c.err = err
			if err != nil {
				return
			}
			continue
		}
		blow := c.kills + c.terms
		if blow == 0 || (blow > 1 && c.rng.IntN(2) == 0) {
			if err := c.site.Kill(i); err != nil {
				c.err = err
				return
			}
			c.kills++
			if c.verbose {
				fmt.Fprintf(os.Stderr, "chaos: %s killed (SIGKILL)\n", id)
			}
			// The pause lets the membership drop it and the survivors
			// take its racks over; the chaos window's end does not cut it
			// short, so every kill is followed by a start.
			pause(context.WithoutCancel(ctx), time.Duration(1000+c.rng.IntN(3000))*time.Millisecond)
		} else {
			stopped := time.Now()
			if err := c.site.Stop(i); err != nil {
				c.err = err
				return
			}
			c.terms++
			if c.verbose {
				fmt.Fprintf(os.Stderr, "chaos: %s stopped (SIGTERM) in %s\n", id, time.Since(stopped).Round(10*time.Millisecond))
			}
		}
		if err := c.site.Restart(i); err != nil {
			c.err = err
			return
		}
		c.restarts++
		if c.verbose {
			fmt.Fprintf(os.Stderr, "chaos: %s started again\n", id)
		}
		pause(ctx, time.Duration(2000+c.rng.IntN(4000))*time.Millisecond)
	}
}

// fenced starts member i again, as its supervisor would, if it has exited
// by itself after the cluster blocked it (a member stalled past the
// membership's health check fences itself, docs/cluster.md); it reports
// whether it did. A member that exited by itself for another reason is
// an error.
func (c *memberChaos) fenced(ctx context.Context, i int) (bool, error) {
	m := c.site.Members[i]
	by, exit := m.ExitedByItself()
	if !by {
		return false, nil
	}
	_ = m.WaitExit(ctx)
	if !strings.Contains(m.Log(), `"message":"member blocked by the cluster: `) {
		return true, fmt.Errorf("%s exited by itself (%v); its log: %s", m.ID, exit, m.LogPath())
	}
	if c.verbose {
		fmt.Fprintf(os.Stderr, "chaos: %s blocked by the cluster, fenced itself and exited (%v); started again\n", m.ID, exit)
	}
	if err := c.site.Restart(i); err != nil {
		return true, err
	}
	c.restarts++
	return true, nil
}
