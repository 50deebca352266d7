package main

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sampleReport is a report of two RPCs, one with a bare run missing.
func sampleReport() reportData {
	var ms []measurement
	for round := range 2 {
		ms = append(ms,
			measurement{rpc: "GetVersion", server: "rmsd", round: round, count: 200, wall: time.Second,
				latencies: latencies(2, 4, 8, 16), cpu: 200 * 300 * time.Microsecond, cpuCalls: 200 * 300 * time.Microsecond, admitted: -1},
			measurement{rpc: "GetVersion", server: "bare", round: round, count: 400, wall: time.Second,
				latencies: latencies(1, 1, 2, 3), cpu: 400 * 100 * time.Microsecond, cpuCalls: 400 * 100 * time.Microsecond, admitted: -1},
			measurement{rpc: "ApplyStoredFirmwareObject", server: "rmsd", round: round, count: 10, wall: time.Second,
				latencies: latencies(40, 90), cpu: 10 * 400 * time.Millisecond, cpuCalls: 10 * 50 * time.Millisecond, admitted: 10, settle: 3 * time.Second},
			measurement{rpc: "ApplyStoredFirmwareObject", server: "bare", round: round, count: 10, wall: 0,
				latencies: latencies(1, 2), cpu: 0, admitted: -1},
		)
	}
	sums := summarize(ms)
	return reportData{
		date:    time.Date(2026, 12, 1, 17, 0, 0, 0, time.UTC),
		machine: machine{cpu: "Test CPU", cores: 2, kernel: "6.0", goVersion: "go1.26", loadBefore: "1.00 1.00 1.00", loadAfter: "2.00 2.00 2.00"},
		o:       options{rounds: 2, duration: time.Second, warmup: time.Second, concurrency: 4, admissions: 10},
		version: "v1.2.3", sums: sums, ratios: ratios(sums, ms), idleRMSDCPU: 0.004,
		charts: []string{latencyChart, ratioChart},
	}
}

func TestReportShowsFiguresRatiosAndMethod(t *testing.T) {
	var b bytes.Buffer
	if err := renderReport(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"rmsd v1.2.3 against a bare grpc-go server",
		"2026-12-01 17:00 UTC",
		"Test CPU, 2 cores",
		"load average 1.00 1.00 1.00 before the run and 2.00 2.00 2.00 after it",
		"![latency](latency.png)", "![ratios](ratios.png)",
		// 400 vs 800 calls in 2 s each; p50 4 ms vs 1 ms, p99 16 ms vs 3 ms; CPU 300 µs vs 100 µs.
		"| GetVersion | 0.50× (0.50×–0.50×) | 4.00× | 5.33× | 3.00× (300 µs vs 100 µs) |",
		"| GetVersion | rmsd | 400 | 0 | 200 | 4.00 ms | 16.00 ms | 300 µs |",
		// 800 calls at 100 µs are 80 ms of CPU, 8 ticks: too few to be precise.
		"| GetVersion | bare | 800 | 0 | 400 | 1.00 ms | 3.00 ms | 100 µs (coarse: 8 ticks) |",
		// The bare admissions took no measurable time: their rate and CPU ratio are n/a;
		// rmsd's CPU per call is counted until the answers, its jobs apart.
		"| ApplyStoredFirmwareObject | n/a (n/a–n/a) | 40.0× | 45.0× | n/a (50.00 ms vs 0 µs) |",
		"rmsd admitted 20 of 20 ApplyStoredFirmwareObject calls",
		"longest wait for a run's jobs to end after its last answer was 3.00 s",
		"Its CPU per call is 50.00 ms until the last call was answered (the figure compared above) and 400.00 ms with the jobs it started",
		"idle rmsd (its simulator included) used 4.0 ms of CPU per second",
		"## Method", "ghz v0.120.0",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

func TestWriteProducesTheReportAndTwoCharts(t *testing.T) {
	dir := t.TempDir()
	if err := write(dir, sampleReport()); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "report.md")); err != nil || !bytes.HasPrefix(b, []byte("# Load harness report")) {
		t.Errorf("report.md: %v %.40q", err, b)
	}
	for _, name := range []string{latencyChart, ratioChart} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Errorf("%s is not a PNG: %v", name, err)
			continue
		}
		if cfg.Width < 600 || cfg.Height < 300 {
			t.Errorf("%s is %dx%d, too small to read", name, cfg.Width, cfg.Height)
		}
	}
}

func TestRatioFormatting(t *testing.T) {
	for v, want := range map[float64]string{0.123: "0.12×", 1: "1.00×", 12.34: "12.3×", 188.4: "188×", math.NaN(): "n/a", math.Inf(1): "n/a"} {
		if got := times(v); got != want {
			t.Errorf("times(%v) = %q, want %q", v, got, want)
		}
	}
	for d, want := range map[time.Duration]string{871 * time.Microsecond: "871 µs", 4530 * time.Microsecond: "4.53 ms", 5980 * time.Millisecond: "5.98 s"} {
		if got := duration(d); got != want {
			t.Errorf("duration(%v) = %q, want %q", d, got, want)
		}
	}
}
