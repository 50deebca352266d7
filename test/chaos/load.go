package main

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
)

// load drives the public API: cold reboots of every rack and power batches
// and reads over random nodes, from several callers at once.
type load struct {
	d     *daemon
	o     options
	racks map[string][]*rmspb.NodeInfo

	mu      sync.Mutex
	jobs    []string // admitted cold reboots
	batches atomic.Int64
}

func newLoad(d *daemon, o options) *load {
	l := &load{d: d, o: o, racks: map[string][]*rmspb.NodeInfo{}}
	for _, n := range d.nodes.GetNodes() {
		l.racks[n.GetRackId()] = append(l.racks[n.GetRackId()], n)
	}
	return l
}

func (l *load) admitted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.jobs...)
}

func u32(v uint32) *uint32 { return &v }

// callTimeout bounds one cold-reboot admission call.
const callTimeout = 30 * time.Second

// start launches the callers; they return when ctx ends.
func (l *load) start(ctx context.Context, wg *sync.WaitGroup) {
	for i := range l.o.callers {
		rng := rand.New(rand.NewPCG(l.o.seed, uint64(i)+10))
		wg.Add(2)
		go func() { defer wg.Done(); l.coldReboots(ctx, rng) }()
		go func() { defer wg.Done(); l.power(ctx, rng) }()
	}
}

// coldReboots keeps asking for cold reboots of random racks with the
// shortest waits the API allows; most are refused while one runs.
func (l *load) coldReboots(ctx context.Context, rng *rand.Rand) {
	racks := make([]string, 0, len(l.racks))
	for r := range l.racks {
		racks = append(racks, r)
	}
	for ctx.Err() == nil {
		rack := racks[rng.IntN(len(racks))]
		// The call outlives the chaos window: a cold reboot the daemon
		// admits is always recorded, so its outcome and holds are checked.
		// A rack left dark by a killed runbook fails the next one's
		// shutdown check after PrestageShutdownPollMaxSeconds.
		call, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		resp, err := l.d.rms.ExecuteColdReboot(call, &rmspb.ExecuteColdRebootRequest{
			Nodes:                        &rmspb.NodeSet{Nodes: l.racks[rack]},
			PrestageShutdownFloorSeconds: u32(1), PrestageShutdownPollMaxSeconds: u32(10),
			DischargeFloorSeconds: u32(1), DischargePollMaxSeconds: u32(60),
			BmcUpFloorSeconds: u32(1), BmcUpPollMaxSeconds: u32(60),
			NvosHelloBackoffSeconds: u32(1), ComputeBootWaitSeconds: u32(1), PollIntervalSeconds: u32(1),
		})
		cancel()
		if err == nil && resp.GetResponse().GetJobId() != "" {
			l.mu.Lock()
			l.jobs = append(l.jobs, resp.GetResponse().GetJobId())
			l.mu.Unlock()
		}
		pause(ctx, time.Duration(200+rng.IntN(800))*time.Millisecond)
	}
}

// power reads and changes power on random nodes: the engine leases them,
// and refuses the ones a cold reboot holds.
func (l *load) power(ctx context.Context, rng *rand.Rand) {
	all := l.d.nodes.GetNodes()
	ops := []rmspb.PowerOperation{rmspb.PowerOperation_POWER_OPERATION_ON, rmspb.PowerOperation_POWER_OPERATION_FORCE_ON}
	for ctx.Err() == nil {
		var pick []*rmspb.NodeInfo
		for range 1 + rng.IntN(8) {
			pick = append(pick, all[rng.IntN(len(all))])
		}
		set := &rmspb.NodeSet{Nodes: pick}
		if rng.IntN(2) == 0 {
			_, _ = l.d.rms.BatchSetPowerState(ctx, &rmspb.BatchSetPowerStateRequest{Nodes: set, Operation: ops[rng.IntN(len(ops))]})
		} else {
			_, _ = l.d.rms.BatchGetPowerState(ctx, &rmspb.BatchGetPowerStateRequest{Nodes: set})
		}
		n := pick[0]
		_, _ = l.d.rms.SetPowerState(ctx, &rmspb.SetPowerStateRequest{RackId: n.GetRackId(), NodeId: n.GetNodeId(), Operation: rmspb.PowerOperation_POWER_OPERATION_ON})
		l.batches.Add(1)
		pause(ctx, time.Duration(20+rng.IntN(100))*time.Millisecond)
	}
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
