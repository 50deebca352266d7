package rmsserver

import (
	"context"
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

// BenchmarkBatchGetPowerState reads power through gRPC for a whole
// simulated rack (35 BMCs) and for 1,000 simulated BMCs. Every iteration
// also times one-node requests against the same server, one per node type
// in the batch, and the benchmark reports batch latency / the slowest
// one-node latency ("x_single"): what a batch costs relative to its slowest
// member alone, measured in the same run. (A power shelf is the slowest: its
// state is the aggregate of a walk of ~10 Redfish GETs, one at a time.)
//
// Each simulated BMC answers after 20 ms, a fast real BMC's latency (real
// ones take 50-500 ms per Redfish GET). Without it the in-process simulator
// answers in microseconds and the benchmark would measure only how fast two
// cores can run both sides' TLS and JSON.
//
//	go test -run '^$' -bench BatchGetPowerState -benchtime 20x ./grpc/rmsserver
func BenchmarkBatchGetPowerState(b *testing.B) {
	const bmcLatency = 20 * time.Millisecond
	cases := []struct {
		name string
		opts sim.Options
	}{
		{"rack-35", sim.Options{NoSwitchHosts: true, Network: 101}},
		{"bmcs-1000", sim.Options{NoSwitchHosts: true, Network: 103, Racks: 25,
			Layout: sim.Layout{Compute: 40, ComputeType: hw.ComputeGB200Nvidia, SwitchType: hw.SwitchGB200Nvidia, ShelfType: hw.PowerShelfGB200Liteon}}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			fleet, err := sim.Start(context.Background(), c.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer fleet.Close()
			for _, d := range fleet.Devices() {
				d.SetLatency(bmcLatency)
			}
			pool := redfish.NewPool(redfish.Options{})
			defer pool.Close()
			runner := nodeops.New(platform.Deps{Redfish: pool, Logger: zerolog.Nop()}, 256) // the configured default
			ts := rmspb.NewRackManagerClient(startTestServer(b, Deps{Racks: racks.New(nil), Nodes: runner}))
			var nodes []hw.Node
			for _, sn := range fleet.Nodes() {
				bmc := sn.BMC
				nodes = append(nodes, hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc})
			}
			all := &rmspb.BatchGetPowerStateRequest{Nodes: nodeSet(nodes...)}
			var singles []*rmspb.BatchGetPowerStateRequest
			seenType := map[hw.NodeType]bool{}
			for _, n := range nodes {
				if !seenType[n.Type] {
					seenType[n.Type] = true
					singles = append(singles, &rmspb.BatchGetPowerStateRequest{Nodes: nodeSet(n)})
				}
			}
			call := func(req *rmspb.BatchGetPowerStateRequest) time.Duration {
				start := time.Now()
				resp, err := ts.BatchGetPowerState(context.Background(), req)
				if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
					b.Fatalf("BatchGetPowerState: %v %v", resp.GetResponse().GetMessage(), err)
				}
				return time.Since(start)
			}
			call(all) // warm connections
			var single, batch time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var slowest time.Duration
				for _, one := range singles {
					slowest = max(slowest, call(one))
				}
				single += slowest
				batch += call(all)
			}
			b.ReportMetric(float64(single.Microseconds())/float64(b.N), "single_us")
			b.ReportMetric(float64(batch.Microseconds())/float64(b.N), "batch_us")
			b.ReportMetric(float64(batch)/float64(single), "x_single")
		})
	}
}
