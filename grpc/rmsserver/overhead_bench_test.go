package rmsserver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

// BenchmarkPowerReadOverhead isolates rmsd's own cost per power read: one
// simulated rack (35 BMCs, answering at once) read through gRPC's
// BatchGetPowerState (handler, node runner, platform adapters) and, as the
// baseline, by the bare Redfish clients of the same pool issuing the same
// requests (a tray's System_0, a shelf's chassis walk from the chassis
// collection), a goroutine per node behind 256 slots, as bench/bareclient
// does. The two sides alternate which goes first every iteration, in the
// same process against the same listeners, so the load of the machine
// weighs on both; "x_raw" is rmsd's time over the baseline's. The
// simulator's TLS and JSON are in both figures, so the ratio understates
// rmsd's share of a process that only drives BMCs (bench/southbound).
//
//	go test -run '^$' -bench PowerReadOverhead -benchtime 200x ./grpc/rmsserver
func BenchmarkPowerReadOverhead(b *testing.B) {
	fleet, err := sim.Start(context.Background(), sim.Options{NoSwitchHosts: true, Network: 105})
	if err != nil {
		b.Fatal(err)
	}
	defer fleet.Close()
	pool := redfish.NewPool(redfish.Options{})
	defer pool.Close()
	runner := nodeops.New(platform.Deps{Redfish: pool, Logger: zerolog.Nop()}, 256) // the configured default
	ts := rmspb.NewRackManagerClient(startTestServer(b, Deps{Racks: racks.New(nil), Nodes: runner}))
	var nodes []hw.Node
	for _, sn := range fleet.Nodes() {
		bmc := sn.BMC
		nodes = append(nodes, hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc})
	}
	req := &rmspb.BatchGetPowerStateRequest{Nodes: nodeSet(nodes...)}
	viaRMSD := func() {
		resp, err := ts.BatchGetPowerState(context.Background(), req)
		if err != nil || len(resp.GetNodePowerStates()) != len(nodes) {
			b.Fatalf("BatchGetPowerState: %v %v", resp.GetResponse().GetMessage(), err)
		}
	}
	raw := rawPowerReader(b, pool, nodes)
	viaRMSD() // every connection pooled
	raw()
	var rmsd, bare time.Duration
	timed := func(d *time.Duration, read func()) {
		start := time.Now()
		read()
		*d += time.Since(start)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			timed(&rmsd, viaRMSD)
			timed(&bare, raw)
		} else {
			timed(&bare, raw)
			timed(&rmsd, viaRMSD)
		}
	}
	b.ReportMetric(float64(rmsd.Microseconds())/float64(b.N), "rmsd_us")
	b.ReportMetric(float64(bare.Microseconds())/float64(b.N), "raw_us")
	b.ReportMetric(float64(rmsd)/float64(bare), "x_raw")
}

// rawPowerReader returns a read of every node's power state through
// redfish clients made once per BMC; a shelf's client is made per read, so
// that it discovers the power-shelf chassis every time, as rmsd's read
// does.
func rawPowerReader(b *testing.B, pool *redfish.Pool, nodes []hw.Node) func() {
	b.Helper()
	reads := make([]func(context.Context) error, len(nodes))
	for i, n := range nodes {
		switch n.Type {
		case hw.PowerShelfGB200Liteon, hw.PowerShelfGB300Liteon:
			ep := *n.BMC
			reads[i] = func(ctx context.Context) error {
				c, err := pool.Client(ep)
				if err != nil {
					return err
				}
				_, err = c.ShelfPowerState(ctx, redfish.ShelfLiteOn)
				return err
			}
		default:
			c, err := pool.Client(*n.BMC)
			if err != nil {
				b.Fatal(err)
			}
			reads[i] = func(ctx context.Context) error {
				_, err := c.SystemPowerState(ctx)
				return err
			}
		}
	}
	slots := make(chan struct{}, 256)
	return func() {
		var wg sync.WaitGroup
		errs := make([]error, len(reads))
		for i, read := range reads {
			wg.Add(1)
			go func() {
				defer wg.Done()
				slots <- struct{}{}
				defer func() { <-slots }()
				errs[i] = read(context.Background())
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				b.Fatalf("raw read of %s: %v", nodes[i].ID, err)
			}
		}
	}
}
