package main

import (
	"math"
	"testing"
	"time"
)

// ms builds latencies in milliseconds.
func latencies(msValues ...int) []time.Duration {
	var out []time.Duration
	for _, v := range msValues {
		out = append(out, time.Duration(v)*time.Millisecond)
	}
	return out
}

func TestSummarizePoolsRoundsAndRatiosCompareServers(t *testing.T) {
	// Two rounds of one RPC on both servers: rmsd answers 100 calls in
	// 1 s per round at 10 ms and 30 ms, the bare server 400 calls in 1 s
	// at 1 ms and 3 ms. rmsd's CPU is 2 ms per call, the bare server's
	// 0.5 ms.
	var ms []measurement
	for round := range 2 {
		rmsdCalls, bareCalls := uint64(100), uint64(400)
		if round == 1 { // the second round is slower on rmsd
			rmsdCalls = 50
		}
		ms = append(ms,
			measurement{rpc: "GetVersion", server: "rmsd", round: round, count: rmsdCalls, errors: 1, wall: time.Second,
				latencies: latencies(30, 10), cpu: time.Duration(rmsdCalls) * 2 * time.Millisecond, cpuCalls: time.Duration(rmsdCalls) * 2 * time.Millisecond, admitted: -1},
			measurement{rpc: "GetVersion", server: "bare", round: round, count: bareCalls, wall: time.Second,
				latencies: latencies(3, 1), cpu: time.Duration(bareCalls) * time.Millisecond / 2, cpuCalls: time.Duration(bareCalls) * time.Millisecond / 2, admitted: -1},
			measurement{rpc: "Apply", server: "rmsd", round: round, count: 4, wall: time.Second, latencies: latencies(5), admitted: 3,
				settle: time.Duration(round+1) * time.Second},
		)
	}
	sums := summarize(ms)
	if len(sums) != 3 || sums[0].rpc != "GetVersion" || sums[0].server != "rmsd" || sums[1].server != "bare" || sums[2].rpc != "Apply" {
		t.Fatalf("summaries in the wrong order: %+v", sums)
	}
	r := sums[0]
	if r.count != 150 || r.errors != 2 || r.rps != 75 {
		t.Errorf("rmsd pooled: %d calls, %d errors, %.1f calls/s; want 150, 2, 75", r.count, r.errors, r.rps)
	}
	// Four latencies 10, 10, 30, 30 ms: nearest rank p50 is the second.
	if r.p50 != 10*time.Millisecond || r.p99 != 30*time.Millisecond {
		t.Errorf("rmsd p50 %v p99 %v, want 10ms and 30ms", r.p50, r.p99)
	}
	if r.cpuPerCall != 2*time.Millisecond || sums[1].cpuPerCall != time.Millisecond/2 {
		t.Errorf("CPU per call %v and %v, want 2ms and 0.5ms", r.cpuPerCall, sums[1].cpuPerCall)
	}
	if a := sums[2]; a.admitted != 6 || a.settle != 2*time.Second {
		t.Errorf("admissions pooled: %d admitted, longest settle %v; want 6 and 2s", a.admitted, a.settle)
	}
	if sums[0].admitted != -1 {
		t.Errorf("a read has %d admissions, want -1 (not applicable)", sums[0].admitted)
	}

	rs := ratios(sums, ms)
	if len(rs) != 1 { // Apply has no bare run: no ratio
		t.Fatalf("ratios: %+v", rs)
	}
	x := rs[0]
	if x.rps != 75.0/400 || x.p50 != 10 || x.p99 != 10 || x.cpu != 4 {
		t.Errorf("ratios rps %.4f p50 %.2f p99 %.2f cpu %.2f; want %.4f, 10, 10, 4", x.rps, x.p50, x.p99, x.cpu, 75.0/400)
	}
	if x.rpsMin != 50.0/400 || x.rpsMax != 100.0/400 {
		t.Errorf("throughput ratio over rounds %.4f–%.4f, want %.4f–%.4f", x.rpsMin, x.rpsMax, 50.0/400, 100.0/400)
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	vals := latencies(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	for _, c := range []struct {
		q    float64
		want int
	}{{0.5, 5}, {0.99, 10}, {0.1, 1}, {0, 1}, {1, 10}} {
		if got := percentile(vals, c.q); got != time.Duration(c.want)*time.Millisecond {
			t.Errorf("percentile(1..10 ms, %v) = %v, want %d ms", c.q, got, c.want)
		}
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("percentile of nothing is not 0")
	}
	if !math.IsNaN(div(1, 0)) {
		t.Error("a ratio over zero is not NaN")
	}
}
