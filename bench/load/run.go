package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rmsd/rmsd/bench/launch"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// run prepares both servers, measures every workload on both for the
// rounds, and writes the report and charts.
func run(ctx context.Context, o options) (err error) {
	dir, err := os.MkdirTemp("", "rmsd-load-")
	if err != nil {
		return err
	}
	defer func() {
		if err == nil && !o.keep {
			_ = os.RemoveAll(dir)
		} else {
			fmt.Fprintf(os.Stderr, "load: logs and files kept in %s\n", dir)
		}
	}()
	m := thisMachine()
	date := time.Now()
	b, ws, err := setup(ctx, o, dir)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, b.close()) }()
	d, bare := b.d, b.bare

	progress("warming up")
	for _, w := range ws {
		for _, s := range []*server{&d.server, bare} {
			if _, err := b.measure(ctx, w, s, b.other(s), -1, true); err != nil {
				return err
			}
		}
	}
	var ms []measurement
	for round := range o.rounds {
		for _, w := range ws {
			order := []*server{&d.server, bare}
			if round%2 == 1 {
				order[0], order[1] = order[1], order[0]
			}
			for _, s := range order {
				mm, err := b.measure(ctx, w, s, b.other(s), round, false)
				if err != nil {
					return err
				}
				progress("round %d %s on %s: %d calls, %d errors, %.0f calls/s, p50 %s, CPU/call %s (%s with its jobs)",
					round+1, w.name, s.name, mm.count, mm.errors, mm.rps(), duration(percentileOf(mm.latencies, 0.5)),
					duration(mm.cpuCalls/time.Duration(max(mm.count, 1))), duration(mm.cpu/time.Duration(max(mm.count, 1))))
				ms = append(ms, mm)
			}
		}
	}
	m.loadAfter = loadAverage()

	sums := summarize(ms)
	rd := reportData{date: date, machine: m, o: o, version: b.fix.version, commit: revision(o.root), sums: sums, ratios: ratios(sums, ms),
		idleRMSDCPU: idleCPU(ms), charts: []string{latencyChart, ratioChart}}
	return write(o.out, rd)
}

// setup builds and starts rmsd and the bare server in dir, prepares the
// daemon and records its replies; it returns the harness ready to
// measure, and the workloads. b.close stops both servers.
func setup(ctx context.Context, o options, dir string) (b *bench, ws []workload, err error) {
	root, err := filepath.Abs(o.root)
	if err != nil {
		return nil, nil, err
	}
	progress("building rmsd and the bare server")
	bin := o.rmsd
	if bin == "" {
		if bin, err = launch.Build(ctx, root, "./cmd/rmsd", dir); err != nil {
			return nil, nil, err
		}
	}
	bareBin, err := launch.Build(ctx, filepath.Join(root, "bench"), "./bare", dir)
	if err != nil {
		return nil, nil, err
	}

	progress("starting rmsd --simulate")
	d, err := startDaemon(ctx, bin, dir, o.network)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, d.close())
		}
	}()
	progress("applying the simulated release to the simulated rack")
	fix, err := prepare(ctx, d)
	if err != nil {
		return nil, nil, err
	}
	ws = workloads(fix)
	rec, err := record(ctx, d, ws)
	if err != nil {
		return nil, nil, err
	}
	recording := filepath.Join(dir, "recording.json")
	if err := rec.Save(recording); err != nil {
		return nil, nil, err
	}
	set, err := protosetOf(&rmspb.GetVersionRequest{})
	if err != nil {
		return nil, nil, err
	}
	bare, err := startBare(ctx, bareBin, recording, filepath.Join(dir, "bare.log"))
	if err != nil {
		return nil, nil, err
	}
	b = &bench{o: o, d: d, bare: bare, fix: fix, protoset: set}
	if err := b.settle(ctx); err != nil { // the recorded admission's jobs
		return nil, nil, errors.Join(err, bare.close())
	}
	return b, ws, nil
}

// close stops both servers.
func (b *bench) close() error {
	return errors.Join(b.bare.close(), b.d.close())
}

// other is the server that is not s.
func (b *bench) other(s *server) *server {
	if s == b.bare {
		return &b.d.server
	}
	return b.bare
}

// idleCPU is rmsd's CPU time per second of wall time over the runs that
// loaded only the bare server.
func idleCPU(ms []measurement) float64 {
	var cpu, wall time.Duration
	for _, m := range ms {
		if m.server == "bare" {
			cpu += m.otherCPU
			wall += m.wall
		}
	}
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds()
}

// write renders report.md and the charts into dir.
func write(dir string, rd reportData) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := latencyPlot(rd.sums, filepath.Join(dir, latencyChart)); err != nil {
		return err
	}
	if err := ratioPlot(rd.ratios, filepath.Join(dir, ratioChart)); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "report.md"))
	if err != nil {
		return err
	}
	if err := renderReport(f, rd); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	progress("wrote %s", filepath.Join(dir, "report.md"))
	return nil
}

// revision is the short git revision of the rmsd module at root, with
// "+changes" when its work tree differs from it; "" when git cannot tell.
func revision(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		rev += "+changes"
	}
	return rev
}

// percentileOf is the q-quantile of unsorted latencies.
func percentileOf(ls []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), ls...)
	slices.Sort(s)
	return percentile(s, q)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "load: "+format+"\n", args...)
}
