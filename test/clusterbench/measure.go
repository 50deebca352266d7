package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/test/clustersite"
)

// callTimeout bounds one call of a round.
const callTimeout = time.Minute

// through returns the client caller c uses: member 0's, or, spread, the
// members' in turn.
func (b *bench) through(spread bool, c int) rmspb.RackManagerClient {
	if !spread {
		return b.site.Members[0].RMS()
	}
	return b.site.Members[c%len(b.site.Members)].RMS()
}

// alternate runs one(spread) for both sides, b.o.rounds times each, the
// order swapped every round, and returns each side's durations.
func (b *bench) alternate(ctx context.Context, one func(context.Context, bool) (time.Duration, error)) (single, spread []time.Duration, err error) {
	for r := range b.o.rounds {
		for _, s := range []bool{r%2 == 1, r%2 == 0} {
			d, err := one(ctx, s)
			if err != nil {
				return nil, nil, err
			}
			if s {
				spread = append(spread, d)
			} else {
				single = append(single, d)
			}
		}
	}
	return single, spread, nil
}

// admission: every caller admits a batch over every rack (one switch of
// each), then the round waits, unmeasured, for the batches to end.
func (b *bench) admission(ctx context.Context) error {
	var last string
	single, spread, err := b.alternate(ctx, func(ctx context.Context, spread bool) (time.Duration, error) {
		ids := make([]string, b.o.callers)
		errs := make([]error, b.o.callers)
		var wg sync.WaitGroup
		start := time.Now()
		for c := range b.o.callers {
			set := &rmspb.NodeSet{}
			for _, rack := range sortedRacks(b.site) {
				sw := switchesOf(b.site.Racks[rack])
				set.Nodes = append(set.Nodes, sw[c%len(sw)])
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				call, cancel := context.WithTimeout(ctx, callTimeout)
				defer cancel()
				resp, err := b.through(spread, c).BatchDisableSwitchMtls(call, &rmspb.BatchDisableSwitchMtlsRequest{
					Nodes: set, Services: []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY},
				})
				switch {
				case err != nil:
					errs[c] = err
				case resp.GetResponse().GetJobId() == "" || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS:
					errs[c] = fmt.Errorf("batch not admitted whole: %v", resp.GetResponse())
				default:
					ids[c] = resp.GetResponse().GetJobId()
				}
			}()
		}
		wg.Wait()
		d := time.Since(start)
		for _, err := range errs {
			if err != nil {
				return 0, fmt.Errorf("batch admission: %w", err)
			}
		}
		last = ids[0]
		// The next round's switches are free once these batches end.
		return d, b.untilEnded(ctx, ids)
	})
	if err != nil {
		return err
	}
	b.lastBatch = last
	report(fmt.Sprintf("batch admission (%d callers, each a batch over %d racks)", b.o.callers, len(b.site.Racks)),
		"through 1 member", single, "through 3 members", spread)
	return nil
}

// untilEnded waits until every job of ids (with its children) is
// terminal.
func (b *bench) untilEnded(ctx context.Context, ids []string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for _, id := range ids {
		for {
			resp, err := b.site.Members[0].RMS().GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: id, IncludeChildJobStates: true})
			if err == nil && allTerminal(resp.GetJobStates()) {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("job %s did not end: %v, %v", id, resp, err)
			}
			clustersite.Pause(ctx, 100*time.Millisecond)
		}
	}
	return nil
}

func allTerminal(states []*rmspb.JobStatus) bool {
	for _, s := range states {
		switch s.GetExecutionState() {
		case rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED, rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED:
		default:
			return false
		}
	}
	return len(states) > 0
}

// powerRead: every caller reads the power of every node of the site.
func (b *bench) powerRead(ctx context.Context) error {
	single, spread, err := b.alternate(ctx, func(ctx context.Context, spread bool) (time.Duration, error) {
		errs := make([]error, b.o.callers)
		var wg sync.WaitGroup
		start := time.Now()
		for c := range b.o.callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				call, cancel := context.WithTimeout(ctx, callTimeout)
				defer cancel()
				resp, err := b.through(spread, c).BatchGetPowerState(call, &rmspb.BatchGetPowerStateRequest{Nodes: b.site.Nodes})
				switch {
				case err != nil:
					errs[c] = err
				case len(resp.GetNodePowerStates()) != len(b.site.Nodes.GetNodes()):
					errs[c] = fmt.Errorf("%d power states for %d nodes: %v", len(resp.GetNodePowerStates()), len(b.site.Nodes.GetNodes()), resp.GetResponse())
				}
			}()
		}
		wg.Wait()
		d := time.Since(start)
		for _, err := range errs {
			if err != nil {
				return 0, fmt.Errorf("whole-site power read: %w", err)
			}
		}
		return d, nil
	})
	if err != nil {
		return err
	}
	report(fmt.Sprintf("whole-site power read (%d callers, %d nodes each)", b.o.callers, len(b.site.Nodes.GetNodes())),
		"through 1 member", single, "through 3 members", spread)
	return nil
}

// forwarded: a job's status asked of its rack's owner and of another
// member, in turn.
func (b *bench) forwarded(ctx context.Context) error {
	resp, err := b.site.Members[0].RMS().GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: b.lastBatch, IncludeChildJobStates: true})
	if err != nil {
		return fmt.Errorf("the last batch %s: %w", b.lastBatch, err)
	}
	var job, rack string
	for _, s := range resp.GetJobStates() {
		if s.GetJobId() != b.lastBatch && s.GetRackId() != "" {
			job, rack = s.GetJobId(), s.GetRackId()
			break
		}
	}
	var owner, other *clustersite.Member
	for _, m := range b.site.Members {
		if slices.Contains(m.Serving(), rack) {
			owner = m
		} else if other == nil {
			other = m
		}
	}
	if job == "" || owner == nil || other == nil {
		return fmt.Errorf("no child job of %s with an owner and another member (job %q rack %q)", b.lastBatch, job, rack)
	}
	const perRound = 20
	var direct, forwarded []time.Duration
	for r := range b.o.rounds * perRound {
		for _, m := range []*clustersite.Member{owner, other} {
			if r%2 == 1 {
				m = map[*clustersite.Member]*clustersite.Member{owner: other, other: owner}[m]
			}
			start := time.Now()
			call, cancel := context.WithTimeout(ctx, callTimeout)
			_, err := m.RMS().GetJobStatus(call, &rmspb.GetJobStatusRequest{JobId: job})
			cancel()
			if err != nil {
				return fmt.Errorf("GetJobStatus %s through %s: %w", job, m.ID, err)
			}
			if m == owner {
				direct = append(direct, time.Since(start))
			} else {
				forwarded = append(forwarded, time.Since(start))
			}
		}
	}
	report(fmt.Sprintf("GetJobStatus of a job of rack %s", rack), "to its owner", direct, "forwarded by another member", forwarded)
	return nil
}

// killToServing kills the member serving the most racks, times until
// every rack is served again, starts it again and lets the racks settle.
func (b *bench) killToServing(ctx context.Context) error {
	var samples []time.Duration
	for range b.o.kills {
		victim, most := 0, -1
		for i, m := range b.site.Members {
			if n := len(m.Serving()); n > most {
				victim, most = i, n
			}
		}
		killed := time.Now()
		if err := b.site.Kill(victim); err != nil {
			return err
		}
		if err := untilServed(ctx, b.site); err != nil {
			return fmt.Errorf("after killing %s: %w", b.site.Members[victim].ID, err)
		}
		samples = append(samples, time.Since(killed))
		fmt.Printf("  %s (%d racks) killed; every rack served again after %s\n", b.site.Members[victim].ID, most,
			samples[len(samples)-1].Round(10*time.Millisecond))
		if err := b.site.Restart(victim); err != nil {
			return err
		}
		if err := b.untilRejoined(ctx, victim); err != nil {
			return err
		}
	}
	slices.Sort(samples)
	fmt.Printf("member SIGKILL to every rack served again: median %s of %d (%v), membership timeout %d s, load average %s\n",
		median(samples).Round(10*time.Millisecond), len(samples), samples, membershipTimeout, loadAverage())
	return nil
}

// untilRejoined waits until the restarted member serves a rack again and
// every rack is served (the cluster moved racks back to it), at most two
// minutes.
func (b *bench) untilRejoined(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		if len(b.site.Members[i].Serving()) > 0 && len(b.site.NotServing()) == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s serves no rack again within 2m (not served: %v)", b.site.Members[i].ID, b.site.NotServing())
		}
		clustersite.Pause(ctx, 50*time.Millisecond)
	}
}

func sortedRacks(site *clustersite.Site) []string {
	var out []string
	for r := range site.Racks {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// switchesOf returns the switch trays among nodes.
func switchesOf(nodes []*rmspb.NodeInfo) []*rmspb.NodeInfo {
	var out []*rmspb.NodeInfo
	for _, n := range nodes {
		switch n.GetType() {
		case rmspb.NodeType_SWITCH_GB200_NVIDIA, rmspb.NodeType_SWITCH_GB300_NVIDIA, rmspb.NodeType_SWITCH_VRNVL72_NVIDIA:
			out = append(out, n)
		}
	}
	return out
}
