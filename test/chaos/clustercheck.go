package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/test/clustersite"
)

// checkCluster waits up to settle for every acknowledged job (and its
// children) to answer terminal through the members, then counts what is
// lost (an id no member knows), stuck (not terminal, or not answered, at
// the end), held (nodes leased on any member with no running job), the
// simulator's overlaps (across members: the simulator sees every
// workflow), and whether every member still answers.
func checkCluster(ctx context.Context, site *clustersite.Site, ids []string, settle time.Duration, verbose bool, rep *report) {
	deadline := time.Now().Add(settle)
	rng := rand.New(rand.NewPCG(uint64(len(ids)), 4))
	pending := ids
	var why map[string]string
	for {
		var still []string
		why = map[string]string{}
		rep.lost = 0
		for _, id := range pending {
			c := rmsClient(site, rng)
			if c == nil {
				still = append(still, id)
				why[id] = "no member serves"
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			resp, err := c.GetJobStatus(rctx, &rmspb.GetJobStatusRequest{JobId: id, IncludeChildJobStates: true})
			cancel()
			switch {
			case status.Code(err) == codes.NotFound:
				rep.lost++
				if verbose {
					fmt.Fprintf(os.Stderr, "chaos: lost %s: %v\n", id, err)
				}
				continue
			case err != nil:
				// A rack being taken over answers UNAVAILABLE: ask again.
				still = append(still, id)
				why[id] = err.Error()
				continue
			}
			for _, s := range resp.GetJobStates() {
				if !terminal(s) {
					still = append(still, id)
					why[id] = fmt.Sprintf("job %s node %s/%s %s %q", s.GetJobId(), s.GetRackId(), s.GetNodeId(), s.GetExecutionState(), s.GetStateDescription())
					break
				}
			}
		}
		pending = still
		if len(pending) == 0 || time.Now().After(deadline) {
			break
		}
		pause(ctx, settleStep)
	}
	rep.stuck = len(pending)
	for _, id := range pending {
		fmt.Fprintf(os.Stderr, "chaos: stuck %s: %s\n", id, why[id])
	}
	rep.jobs = len(ids)
	// A killed job reads terminal at once but holds its nodes until its
	// cancelled workflow has returned: held nodes get the rest of settle.
	for {
		held, err := heldNodes(ctx, site)
		if err != nil {
			rep.daemonErr = err
			return
		}
		rep.held = held
		if held == 0 || time.Now().After(deadline) {
			break
		}
		pause(ctx, settleStep)
	}
	rep.overlaps = site.Fleet.Overlaps()
	for _, m := range site.Members {
		if _, err := m.RMS().GetVersion(ctx, &rmspb.GetVersionRequest{}); err != nil {
			rep.daemonErr = fmt.Errorf("%s GetVersion: %w", m.ID, err)
		}
	}
}

// heldNodes sums the nodes held on every member, as its admin service
// lists the engines of the racks it owns.
func heldNodes(ctx context.Context, site *clustersite.Site) (int, error) {
	held := 0
	for _, m := range site.Members {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		l, err := m.Admin().ListActors(rctx, &adminpb.ListActorsRequest{})
		cancel()
		if err != nil {
			return 0, fmt.Errorf("%s admin ListActors: %w", m.ID, err)
		}
		held += int(l.GetHeldNodes())
	}
	return held, nil
}
