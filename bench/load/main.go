// Command load is the load harness behind `task bench:load`: it measures
// rmsd's gRPC edge against a bare grpc-go server that answers the same
// messages from memory, and writes bench/report.md and its charts.
//
// It builds and starts `rmsd --simulate` (a real process in a temporary
// directory, free ports) and prepares it: adds the simulated firmware
// release, applies it to the simulated rack so that every node runs it,
// and keeps that apply's parent job as the job record GetJobStatus reads.
// It then records one reply of each measured RPC from the daemon and
// starts the bare server (bench/bare) on that recording, as a process of
// its own. Each round runs ghz (github.com/bojand/ghz, as a library)
// against both servers in alternation for every RPC:
//
//   - GetJobStatus of the apply's parent job,
//   - GetVersion,
//   - BatchGetPowerState of the simulated rack's 35 nodes,
//   - ApplyStoredFirmwareObject of the release to those 35 nodes: a
//     firmware apply admission, which answers with a parent and 35 child
//     job ids at once.
//
// Each admission names a rack id of its own for the 35 real nodes, so
// admissions never refuse each other on the job engine's node exclusion;
// the nodes already run the release, so every child reads its node's
// firmware inventory through the simulator, finds every target up to date
// and completes without flashing. A run of admissions is a fixed number of
// calls, and it ends when the daemon holds no node any more (its admin
// service's held-node count is zero), so the CPU time of the jobs an
// admission starts is part of its cost and the next run starts on an idle
// daemon.
//
// For every run it reports requests, errors, requests per second and
// latency percentiles from ghz, and each server's CPU time (utime+stime
// from /proc/<pid>/stat) per request; the report gives the rmsd/bare
// ratios. rmsd's figures include its in-process simulator.
//
// Usage (from bench/, which is a module of its own; `task bench:load`
// runs it):
//
//	go run ./load [-duration 4s] [-rounds 3] [-concurrency 4] [-admissions 12] [-out .]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 4*time.Second, "length of one ghz run of a read RPC")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "length of the unmeasured warm-up run of each read RPC on each server")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds; each runs every RPC against both servers in alternation")
	flag.UintVar(&o.concurrency, "concurrency", 4, "concurrent ghz workers (on one connection)")
	flag.UintVar(&o.admissions, "admissions", 12, "firmware apply admissions per run (each starts 36 jobs on rmsd)")
	flag.DurationVar(&o.settle, "settle", 5*time.Minute, "how long the jobs of one admission run may take to end")
	flag.StringVar(&o.root, "root", "..", "the rmsd module's root (where ./cmd/rmsd is built from)")
	flag.StringVar(&o.rmsd, "rmsd", "", "rmsd binary to run (default: build it from -root)")
	flag.StringVar(&o.out, "out", ".", "where report.md and the charts are written")
	flag.IntVar(&o.network, "network", 86, "second octet of the simulated devices' loopback addresses")
	flag.BoolVar(&o.keep, "keep", false, "keep the temporary directory (logs, database, recording)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintf(os.Stderr, "load: %v\n", err)
		os.Exit(1)
	}
}
