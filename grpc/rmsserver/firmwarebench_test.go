package rmsserver

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/fwupdate"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store/sqlstore"
)

// BenchmarkApplyFirmware1000 is the main caller's firmware flow at scale:
// one ApplyFirmwareObject of a GB200 release (compute BMC and HMC packages,
// force_update, activation) to 1,000 simulated compute trays on 25 racks,
// then GetFirmwareJobStatus on the parent until it is terminal. The same
// run times the same apply to a single tray ("trays-1"), the baseline: a
// tray's update is mostly simulated device time (flash, BMC reboot), so
// settle_ms of trays-1000 / settle_ms of trays-1 is what 999 more trays
// cost.
//
// Reported per apply: admit_ms (the RPC: manifest, planning, admission of
// 1,001 jobs; the two packages are downloaded in the children's stage 0),
// settle_ms (request to a terminal parent), and the peak goroutines and heap sampled while it runs.
//
//	go test -run '^$' -bench ApplyFirmware1000 -benchtime 3x ./grpc/rmsserver
func BenchmarkApplyFirmware1000(b *testing.B) {
	layout := sim.Layout{ComputeType: hw.ComputeGB200Nvidia, SwitchType: hw.SwitchGB200Nvidia, ShelfType: hw.PowerShelfGB200Liteon}
	cases := []struct {
		name  string
		racks int
		per   int
		net   int
	}{
		{"trays-1", 1, 1, 105},
		{"trays-1000", 25, 40, 107},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			l := layout
			l.Compute = c.per
			bf := startApplyBench(b, sim.Options{Racks: c.racks, Layout: l, NoSwitchHosts: true, Network: c.net, TimeScale: 0.0001,
				Timing: sim.Timing{BMCReboot: 5000 * time.Second}}) // a 0.5 s outage, never missed
			var admit, settle time.Duration
			var peakG int
			var peakHeap uint64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				a, s, g, h := bf.applyOnce(b)
				admit, settle = admit+a, settle+s
				peakG, peakHeap = max(peakG, g), max(peakHeap, h)
			}
			b.ReportMetric(float64(admit.Milliseconds())/float64(b.N), "admit_ms")
			b.ReportMetric(float64(settle.Milliseconds())/float64(b.N), "settle_ms")
			b.ReportMetric(float64(peakG), "peak_goroutines")
			b.ReportMetric(float64(peakHeap)/(1<<20), "peak_heap_MiB")
		})
	}
}

// applyBench is a server, catalog and simulated fleet for the benchmark.
type applyBench struct {
	client  rmspb.RackManagerClient
	release simrelease.Release
	nodes   *rmspb.NodeSet
}

func startApplyBench(b *testing.B, opts sim.Options) *applyBench {
	b.Helper()
	fleet, err := sim.Start(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(fleet.Close)
	art, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(art.Close)
	bf := &applyBench{nodes: &rmspb.NodeSet{}}
	if bf.release, err = simrelease.Publish(art, simrelease.Options{Size: 16 << 10}); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := sqlstore.OpenSQLite(ctx, filepath.Join(b.TempDir(), "rmsd.db"), sqlstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	dl := download.New(download.Options{SourceRoot: dir, Logger: zerolog.Nop()})
	cat, err := catalog.Open(ctx, catalog.Options{Store: st, Downloader: dl, Dir: dir, Logger: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cat.Close(); dl.Close(); _ = st.Close() })
	pool := redfish.NewPool(redfish.Options{TaskPollInterval: 50 * time.Millisecond, LivenessInterval: 50 * time.Millisecond,
		LivenessTimeout: time.Minute})
	b.Cleanup(pool.Close)
	runner := nodeops.New(platform.Deps{Redfish: pool, Logger: zerolog.Nop()}, 256) // the configured default
	for _, sn := range fleet.Nodes() {
		bmc := sn.BMC
		bf.nodes.Nodes = append(bf.nodes.Nodes, NodeInfoToProto(hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc}))
	}
	bf.client = rmspb.NewRackManagerClient(startTestServer(b, Deps{
		Racks: racks.New(nil), Nodes: runner, Jobs: newTestEngine(b), Catalog: cat, FirmwareDir: dir,
		FirmwareTiming: fwupdate.Timing{PollInterval: 50 * time.Millisecond, VersionCheckDelay: time.Millisecond,
			VersionCheckInterval: 50 * time.Millisecond, VersionCheckAttempts: 100},
	}))
	return bf
}

// applyOnce applies the release to every tray and waits for the parent:
// admission and settle times, peak goroutines and heap in use.
func (bf *applyBench) applyOnce(b *testing.B) (time.Duration, time.Duration, int, uint64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	resp, err := bf.client.ApplyFirmwareObject(ctx, &rmspb.ApplyFirmwareObjectRequest{ConfigJson: bf.release.ConfigJSON,
		Nodes: bf.nodes, ForceUpdate: true})
	if err != nil {
		b.Fatal(err)
	}
	admit := time.Since(start)
	if n := len(resp.GetJobs()); n != len(bf.nodes.GetNodes()) {
		b.Fatalf("%d jobs for %d trays: %s", n, len(bf.nodes.GetNodes()), resp.GetResponse().GetMessage())
	}
	var peakG int
	var peakHeap uint64
	var ms runtime.MemStats
	for {
		st, err := bf.client.GetFirmwareJobStatus(ctx, &rmspb.GetFirmwareJobStatusRequest{JobId: resp.GetResponse().GetJobId()})
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		peakG, peakHeap = max(peakG, runtime.NumGoroutine()), max(peakHeap, ms.HeapInuse)
		switch st.GetJobState() {
		case rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED:
			return admit, time.Since(start), peakG, peakHeap
		case rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED:
			b.Fatalf("apply failed: %s %s", st.GetErrorMessage(), clip(st.GetResultJson(), 2000))
		}
		select {
		case <-ctx.Done():
			b.Fatal("apply did not settle")
		case <-time.After(20 * time.Millisecond):
		}
	}
}
