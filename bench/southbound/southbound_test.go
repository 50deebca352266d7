package main

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestHarnessWritesAWellFormedReport runs every scenario at the smallest
// scale (one rack, two for the scale curve, one round, a 4 MiB firmware
// package, 20 nodes admitted) against real rmsd, rmssim, bare client and
// engineadmit processes, and checks the report and chart it writes: the harness works,
// whatever the figures are.
func TestHarnessWritesAWellFormedReport(t *testing.T) {
	out := t.TempDir()
	o := options{root: "../..", out: out, siteRacks: 1, rackCalls: 2, rounds: 1, firstRounds: 1, scale: []int{1, 2}, network: 78,
		firmwareMiB: 4, admitNodes: 20}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := measureAndReport(ctx, o, testLog{t}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, reportFile))
	if err != nil {
		t.Fatal(err)
	}
	report := string(b)
	for _, want := range []string{
		"## Ratios (rmsd / bare)", "## Runs", "## Memory", "## Scale curve", "![scale](southbound.png)",
		"BatchGetPowerState, one rack (35 nodes): server CPU per call",
		"Whole-site power read, 1 racks: wall time, first read after start",
		"rmsd's RSS per managed BMC, 35 BMCs",
		"Least-squares lines over the curve",
		"## Firmware", "## Admission",
		"Firmware, 4.0 MiB to the 18 compute trays of a rack: throughput",
		"rmsd's RSS growth during the push",
		"BatchUpdateFirmware of 20 nodes through gRPC: server CPU per admitted node",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	// Every ratio row has a figure (the figures themselves are not checked).
	ratioRow := regexp.MustCompile(`(?m)^\| [^|]+ \| [^|]+ \| (\d+\.\d\d×|n/a) \(`)
	if got := len(ratioRow.FindAllString(report, -1)); got != 7 {
		t.Errorf("%d ratio rows with a figure, want 7:\n%s", got, report)
	}
	// One run per scenario and side: rack, site and first, rmsd and bare.
	for _, scenario := range []string{"rack", "site", "first"} {
		for _, side := range []string{"rmsd", "bare"} {
			row := regexp.MustCompile(`(?m)^\| ` + scenario + ` \| 0 \| ` + side + ` \| \d+ \| \d+\.\d\d ms \|`)
			if !row.MatchString(report) {
				t.Errorf("no %s run of %s in the report:\n%s", scenario, side, report)
			}
		}
	}
	// One firmware run and one admission round per side.
	for _, row := range []string{`(?m)^\| 0 \| rmsd \| 18 \| 72\.0 MiB \|`, `(?m)^\| 0 \| bare \| 18 \| 72\.0 MiB \|`,
		`(?m)^\| 0 \| rmsd \| 20 \| \d+\.\d\d ms \|`, `(?m)^\| 0 \| engine \| 20 \| \d+\.\d\d ms \|`} {
		if !regexp.MustCompile(row).MatchString(report) {
			t.Errorf("no row %s in the report:\n%s", row, report)
		}
	}
	for _, racks := range []string{"| 1 | 35 |", "| 2 | 70 |"} {
		if !strings.Contains(report, racks) {
			t.Errorf("no scale point %q in the report:\n%s", racks, report)
		}
	}
	f, err := os.Open(filepath.Join(out, chartFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the chart is not a PNG: %v", err)
	}
	if r := img.Bounds(); r.Dx() < 300 || r.Dy() < 200 {
		t.Errorf("chart of %v, want a readable size", r)
	}
}

func TestParseScale(t *testing.T) {
	got, err := parseScale("1, 10,300")
	if err != nil || len(got) != 3 || got[0] != 1 || got[1] != 10 || got[2] != 300 {
		t.Fatalf("parseScale = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "1,x", "-3"} {
		if _, err := parseScale(bad); err == nil {
			t.Errorf("parseScale(%q) succeeded", bad)
		}
	}
}

func TestFitFindsTheSlopeOfALine(t *testing.T) {
	s := fit([]float64{35, 350, 3500}, []float64{10 + 2*35, 10 + 2*350, 10 + 2*3500})
	if d := s.b - 2; d > 1e-9 || d < -1e-9 || s.r2 < 0.999999 {
		t.Fatalf("fit = %+v, want slope 2 and R² 1", s)
	}
}

// testLog sends the harness's progress to the test log.
type testLog struct{ t *testing.T }

func (d testLog) Write(p []byte) (int, error) {
	d.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// TestMemoryScenarioAloneProfilesRMSD runs -only memory on one rack with
// a heap and a CPU profile, and checks what it prints and saves: every
// side's resident set, rmsd's runtime figures and both profiles' top
// entries.
func TestMemoryScenarioAloneProfilesRMSD(t *testing.T) {
	heap := filepath.Join(t.TempDir(), "profiles") // the harness makes it
	o := options{root: "../..", out: t.TempDir(), siteRacks: 1, rackCalls: 2, rounds: 1, firstRounds: 1, scale: []int{1}, network: 79,
		firmwareMiB: 1, admitNodes: 1, only: "memory", heapDir: heap, cpuDir: heap, cpuSecs: 1}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var log strings.Builder
	if err := measureAndReport(ctx, o, &log); err != nil {
		t.Fatal(err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`memory rmsd, 35 BMCs: RSS \d+\.\d MiB after start \(anon \d+\.\d MiB, file \d+\.\d MiB\)`),
		regexp.MustCompile(`memory rmsd runtime: heap in use \d+\.\d MiB .* goroutine stacks \d+\.\d MiB \(\d+ goroutines`),
		regexp.MustCompile(`memory bare, 35 BMCs: RSS`),
		regexp.MustCompile(`rmsd's heap in use .*\n(.*\n)*.*flat%`),
		regexp.MustCompile(`rmsd's CPU over [1-9]\d* one-rack reads in 1 s .*\n(.*\n)*.*flat%`),
		regexp.MustCompile(`rmsd's allocations over those reads .*\n(.*\n)*.*flat%`),
		regexp.MustCompile(`rmsd / bare, one-rack CPU per call: (\d+\.\d\d×|n/a)`),
	} {
		if !want.MatchString(log.String()) {
			t.Errorf("the output lacks %s:\n%s", want, log.String())
		}
	}
	for _, f := range []string{"rmsd.heap.pb.gz", "rmsd.goroutine.txt", "rmsd.cpu.pb.gz", "rmsd.smaps", "bare.smaps"} {
		if st, err := os.Stat(filepath.Join(heap, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not saved: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(o.out, reportFile)); !os.IsNotExist(err) {
		t.Errorf("-only memory wrote the report (%v)", err)
	}
}
