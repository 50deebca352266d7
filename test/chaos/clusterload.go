package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/test/clustersite"
)

// clusterLoad drives a cluster's public API through random members: cold
// reboots of one rack, switch batches over several racks (split per rack
// under a cluster parent), power calls and reads over random nodes, and
// status polls of acknowledged jobs (each through a random member, most
// often not the rack's owner).
type clusterLoad struct {
	site  *clustersite.Site
	o     options
	racks []string

	mu    sync.Mutex
	jobs  []string // acknowledged job ids: cold reboots and cluster parents
	calls atomic.Int64
}

func newClusterLoad(site *clustersite.Site, o options) *clusterLoad {
	l := &clusterLoad{site: site, o: o}
	for r := range site.Racks {
		l.racks = append(l.racks, r)
	}
	slices.Sort(l.racks)
	return l
}

func (l *clusterLoad) admitted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.jobs...)
}

func (l *clusterLoad) acknowledged(id string) {
	if id == "" {
		return
	}
	l.mu.Lock()
	l.jobs = append(l.jobs, id)
	l.mu.Unlock()
}

// start launches the callers; they return when ctx ends.
func (l *clusterLoad) start(ctx context.Context, wg *sync.WaitGroup) {
	for i := range l.o.callers {
		rng := rand.New(rand.NewPCG(l.o.seed, uint64(i)+10))
		wg.Add(4)
		go func() { defer wg.Done(); l.coldReboots(ctx, rng) }()
		go func() { defer wg.Done(); l.switchBatches(ctx, rng) }()
		go func() { defer wg.Done(); l.power(ctx, rng) }()
		go func() { defer wg.Done(); l.polls(ctx, rng) }()
	}
}

// coldReboots asks for cold reboots of random racks through random
// members; most are refused while one runs on the rack.
func (l *clusterLoad) coldReboots(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		c := rmsClient(l.site, rng)
		if c == nil {
			pause(ctx, 100*time.Millisecond)
			continue
		}
		rack := l.racks[rng.IntN(len(l.racks))]
		// The call outlives the chaos window: an admitted job is always
		// recorded, so its outcome and holds are checked.
		call, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		resp, err := c.ExecuteColdReboot(call, &rmspb.ExecuteColdRebootRequest{
			Nodes:                        &rmspb.NodeSet{Nodes: l.site.Racks[rack]},
			PrestageShutdownFloorSeconds: u32(1), PrestageShutdownPollMaxSeconds: u32(10),
			DischargeFloorSeconds: u32(1), DischargePollMaxSeconds: u32(60),
			BmcUpFloorSeconds: u32(1), BmcUpPollMaxSeconds: u32(60),
			NvosHelloBackoffSeconds: u32(1), ComputeBootWaitSeconds: u32(1), PollIntervalSeconds: u32(1),
		})
		cancel()
		if err == nil {
			l.acknowledged(resp.GetResponse().GetJobId())
		}
		pause(ctx, time.Duration(200+rng.IntN(800))*time.Millisecond)
	}
}

// switchBatches disables telemetry mTLS on one switch of each of two or
// three random racks: a batch split per rack, whose cluster parent any
// member answers.
func (l *clusterLoad) switchBatches(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		c := rmsClient(l.site, rng)
		if c == nil {
			pause(ctx, 100*time.Millisecond)
			continue
		}
		set := &rmspb.NodeSet{}
		for _, rack := range pickRacks(rng, l.racks, 2+rng.IntN(2)) {
			if sw := switchesOf(l.site.Racks[rack]); len(sw) > 0 {
				set.Nodes = append(set.Nodes, sw[rng.IntN(len(sw))])
			}
		}
		call, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		resp, err := c.BatchDisableSwitchMtls(call, &rmspb.BatchDisableSwitchMtlsRequest{
			Nodes: set, Services: []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY},
		})
		cancel()
		if err == nil {
			l.acknowledged(resp.GetResponse().GetJobId())
		}
		pause(ctx, time.Duration(500+rng.IntN(1500))*time.Millisecond)
	}
}

// power reads and changes power on random nodes of the whole site.
func (l *clusterLoad) power(ctx context.Context, rng *rand.Rand) {
	all := l.site.Nodes.GetNodes()
	ops := []rmspb.PowerOperation{rmspb.PowerOperation_POWER_OPERATION_ON, rmspb.PowerOperation_POWER_OPERATION_FORCE_ON}
	for ctx.Err() == nil {
		c := rmsClient(l.site, rng)
		if c == nil {
			pause(ctx, 100*time.Millisecond)
			continue
		}
		var pick []*rmspb.NodeInfo
		for range 1 + rng.IntN(8) {
			pick = append(pick, all[rng.IntN(len(all))])
		}
		set := &rmspb.NodeSet{Nodes: pick}
		if rng.IntN(2) == 0 {
			_, _ = c.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: set, Operation: ops[rng.IntN(len(ops))]})
		} else {
			_, _ = c.BatchGetPowerState(ctx, &rmspb.BatchGetPowerStateRequest{Nodes: set})
		}
		n := pick[0]
		_, _ = c.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: n.GetRackId(), NodeId: n.GetNodeId(), Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
		l.calls.Add(1)
		pause(ctx, time.Duration(50+rng.IntN(200))*time.Millisecond)
	}
}

// polls reads acknowledged jobs through random members.
func (l *clusterLoad) polls(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		ids := l.admitted()
		c := rmsClient(l.site, rng)
		if c == nil || len(ids) == 0 {
			pause(ctx, 100*time.Millisecond)
			continue
		}
		_, _ = c.GetJobStatus(ctx, &rmspb.GetJobStatusRequest{JobId: ids[rng.IntN(len(ids))], IncludeChildJobStates: true})
		pause(ctx, time.Duration(100+rng.IntN(300))*time.Millisecond)
	}
}

// pickRacks returns n distinct racks at random.
func pickRacks(rng *rand.Rand, racks []string, n int) []string {
	p := slices.Clone(racks)
	rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p[:min(n, len(p))]
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
