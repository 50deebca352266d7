// Command southbound is the harness behind `task bench:southbound`: it
// measures what rmsd itself costs when it drives hardware, against a bare
// southbound client (bench/bareclient) doing the same Redfish requests, and
// writes bench/southbound.md with its scale chart.
//
// It builds rmsd, rmssim and the bare client, starts enough rmssim
// processes for the largest site it measures (a simulator runs apart, so
// neither side pays for it, and its CPU is reported apart), and then:
//
//   - one rack (35 nodes): BatchGetPowerState through rmsd's gRPC against
//     the bare client's read of the same nodes, server CPU per call and p50
//     latency, in alternated rounds, within which the sides take turns of
//     -turn calls;
//   - the whole site (-site-racks racks): the warm read, in the same
//     rounds (-site-reads per side, one at a time by turns), and both
//     resident sets with every connection pooled;
//   - firmware: a -firmware-mib package to every compute tray of a rack,
//     through rmsd's BatchUpdateFirmware and the bare client's streamed
//     multipart push, throughput and resident-set growth, alternated;
//   - admission: a BatchUpdateFirmware of -admit-nodes trays, rmsd's CPU
//     time per admitted node against the engine's own admission
//     (bench/engineadmit), alternated;
//   - the first whole-site read after a start (every TLS handshake in it),
//     each side freshly started per round;
//   - the scale curve: rmsd started on each of -scale racks, its start
//     time, resident set and whole-site reads, charted.
//
// Every figure is printed as it is taken and written to the report.
//
// Usage (from bench/, a module of its own):
//
//	go run ./southbound [-site-racks 100] [-scale 1,10,30,100,300] [-rounds 5] [-turn 10] [-site-reads 3] [-firmware-mib 256] [-admit-nodes 1000] [-out .]
//	go run ./southbound -only admission [-rounds 8] [-baseline /path/to/old/rmsd] [-perf dir]
//	go run ./southbound -only memory [-site-racks 100] [-baseline /path/to/old/rmsd] [-rmsd-env GOGC=50] [-heap-profile dir] [-cpu-profile dir] [-perf dir]
//
// -only admission runs the admission scenario alone, on one simulated
// rack, and prints its ratios without writing the report; -baseline adds
// a second rmsd to every round (the before of a change), -perf records a
// perf profile of each rmsd over its measured admissions only
// (`perf report -i dir/rmsd.perf.data --time "$(cat dir/rmsd.perf.data.time)" --no-children`).
//
// -only memory runs the warm whole-site scenario's memory figure alone,
// one side after the other (rmsd, the -baseline rmsd if given, the bare
// client), each freshly started on -site-racks racks and taken through
// the warm scenario's reads: its resident set after start and with every
// connection pooled, split into anonymous and file-backed pages, and
// rmsd's Go runtime figures (heap in use, goroutine stacks, goroutines)
// from its /metrics; the resident set with every connection pooled is
// the median of readings taken after each round, with their range.
// -heap-profile dir turns on rmsd's [metrics] pprof and saves its heap
// profile and goroutine counts there, printing the heap's top entries
// (`go tool pprof -top -sample_index=inuse_space dir/rmsd.heap.pb.gz`),
// and every side's memory mappings (dir/<side>.smaps).
// -cpu-profile dir profiles rmsd's CPU while it serves one-rack reads
// back to back after the rounds, and prints the profile's top entries
// (`go tool pprof -top dir/rmsd.cpu.pb.gz`). -perf dir records a perf
// profile of every side (rmsd, baseline, bare) over its warm whole-site
// reads alone, read as the admission's are.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	var o options
	var scale string
	flag.StringVar(&o.root, "root", "..", "the rmsd module's root (rmsd and rmssim are built from it, the bare client from its bench/)")
	flag.StringVar(&o.out, "out", ".", "where southbound.md and its chart are written")
	flag.IntVar(&o.siteRacks, "site-racks", 100, "racks of the whole-site scenarios (35 BMCs each)")
	flag.IntVar(&o.rackCalls, "rack-calls", 300, "one-rack reads per run")
	flag.IntVar(&o.rounds, "rounds", 5, "alternated rounds of the one-rack and warm whole-site scenarios")
	flag.IntVar(&o.turn, "turn", 10, "one-rack calls a side makes at a time before the other takes its turn, within a round")
	flag.IntVar(&o.siteReads, "site-reads", 3, "warm whole-site reads per side and round, the sides taking turns read by read")
	flag.IntVar(&o.firstRounds, "first-rounds", 2, "alternated rounds of the first read after a start")
	flag.IntVar(&o.firmwareMiB, "firmware-mib", 256, "MiB of the firmware scenario's package, pushed to every compute tray of a rack")
	flag.IntVar(&o.admitNodes, "admit-nodes", 1000, "compute trays of the admission scenario's BatchUpdateFirmware")
	flag.StringVar(&scale, "scale", "1,10,30,100,300", "racks of each point of the scale curve")
	flag.IntVar(&o.network, "network", 71, "second octet of the first simulator's loopback addresses (each further simulator, one per 50 racks, takes the next)")
	flag.StringVar(&o.only, "only", "", "run one scenario alone and print its figures, writing no report (admission or memory)")
	flag.StringVar(&o.baseline, "baseline", "", "with -only admission or memory: a second rmsd binary, measured in turn")
	flag.StringVar(&o.perfDir, "perf", "", "with -only admission: record perf profiles of each rmsd's measured admissions; with -only memory, of each side's whole-site reads (dir/<side>.perf.data)")
	flag.StringVar(&o.heapDir, "heap-profile", "", "with -only memory: serve rmsd's pprof and save its heap profile and goroutine counts, and every side's memory mappings (/proc/<pid>/smaps), into this directory")
	flag.IntVar(&o.cpuSecs, "cpu-seconds", 15, "with -cpu-profile: how long rmsd's one-rack reads are profiled")
	flag.StringVar(&o.cpuDir, "cpu-profile", "", "with -only memory: serve rmsd's pprof and, after the rounds, save its CPU profile of one-rack reads alone into this directory")
	flag.Func("rmsd-env", "with -only memory: KEY=VALUE added to rmsd's environment, not the baseline's (repeatable; GOGC=50, RMS_REDFISH__…)", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("%q is not KEY=VALUE", v)
		}
		o.rmsdEnv = append(o.rmsdEnv, v)
		return nil
	})
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (logs, stores)")
	flag.Parse()
	var err error
	if o.scale, err = parseScale(scale); err != nil {
		fmt.Fprintf(os.Stderr, "southbound: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := measureAndReport(ctx, o, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "southbound: %v\n", err)
		os.Exit(1)
	}
}

// parseScale reads a comma-separated list of positive rack counts.
func parseScale(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-scale %q: %q is not a positive number of racks", s, f)
		}
		out = append(out, n)
	}
	return out, nil
}
