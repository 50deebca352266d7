package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// reportFile is the report's name in -out.
const reportFile = "southbound.md"

// measureAndReport runs every scenario and writes the report and chart,
// printing the report too.
func measureAndReport(ctx context.Context, o options, log io.Writer) error {
	if o.siteRacks < 1 || o.rackCalls < 1 || o.rounds < 1 || o.firstRounds < 1 || len(o.scale) == 0 || o.firmwareMiB < 1 || o.admitNodes < 1 {
		return fmt.Errorf("site racks, rack calls, rounds, first rounds, firmware MiB and admission nodes must be at least 1, with one scale point or more")
	}
	if o.only != "" && o.only != "admission" && o.only != "memory" {
		return fmt.Errorf("-only %q: the scenarios that run alone are admission and memory", o.only)
	}
	if o.baseline != "" && o.only == "" {
		return fmt.Errorf("-baseline goes with -only admission or -only memory")
	}
	if o.perfDir != "" && o.only != "admission" && o.only != "memory" {
		return fmt.Errorf("-perf goes with -only admission or -only memory")
	}
	if (o.heapDir != "" || o.cpuDir != "" || len(o.rmsdEnv) > 0) && o.only != "memory" {
		return fmt.Errorf("-heap-profile, -cpu-profile and -rmsd-env go with -only memory")
	}
	res, err := runHarness(ctx, o, log)
	if err != nil {
		return err
	}
	switch o.only {
	case "admission":
		return writeAdmissionSummary(log, res)
	case "memory":
		return writeMemorySummary(log, res)
	}
	if err := scaleChart(res.scale, filepath.Join(o.out, chartFile)); err != nil {
		return err
	}
	path := filepath.Join(o.out, reportFile)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := render(f, res, chartFile); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := render(log, res, chartFile); err != nil {
		return err
	}
	_, err = fmt.Fprintf(log, "\nwrote %s and %s\n", path, filepath.Join(o.out, chartFile))
	return err
}

// writeAdmissionSummary prints the admission scenario's ratios alone: rmsd
// against the engine, and, with a baseline, rmsd against it and the
// baseline against the engine, each the median of the rounds' ratios with
// their range, and the ratio of the two sides' least rounds (leastRatio).
func writeAdmissionSummary(log io.Writer, res *results) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nadmission of %d nodes, %d rounds, load average %s at the start and %s at the end\n",
		res.o.admitNodes, res.o.rounds, res.loadBefore, loadAverage())
	pairs := [][2]string{{"rmsd", "engine"}}
	if res.o.baseline != "" {
		pairs = append(pairs, [2]string{"baseline", "engine"}, [2]string{"rmsd", "baseline"})
	}
	for _, p := range pairs {
		ratios, num, den := res.admissionRatio(p[0], p[1])
		med, lo, hi := spread(ratios)
		fmt.Fprintf(&b, "%s / %s, CPU per admitted node: %s (%s–%s); medians %s vs %s; least rounds %s vs %s: %s\n",
			p[0], p[1], times(med), times(lo), times(hi), us(medianDur(num)), us(medianDur(den)),
			us(leastDur(num)), us(leastDur(den)), times(leastRatio(num, den)))
	}
	for _, side := range []string{"rmsd", "baseline"} {
		var after []time.Duration
		for _, a := range res.admissions {
			if a.side == side && a.nodes > 0 {
				after = append(after, a.afterAnswer/time.Duration(a.nodes))
			}
		}
		if len(after) > 0 {
			fmt.Fprintf(&b, "%s after the answer (the children's first steps, not counted above): median %s per node\n", side, us(medianDur(after)))
		}
	}
	_, err := io.WriteString(log, b.String())
	return err
}

// writeMemorySummary prints the memory scenario's resident sets per BMC
// and, from its alternated rounds, rmsd's one-rack CPU per call and p50
// against the bare client's (and the baseline's), each the median of the
// rounds' ratios with their range.
func writeMemorySummary(log io.Writer, res *results) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\nmemory of %d racks, %d rounds, load average %s at the start and %s at the end\n",
		res.o.siteRacks, res.o.rounds, res.loadBefore, loadAverage())
	for _, m := range res.breakdowns {
		fmt.Fprintf(&b, "%s: %s with every connection pooled, %s per BMC (rounds %s–%s; anon %s, file %s)\n",
			m.side, mib(m.warm.Total), kib(m.warm.Total/int64(m.bmcs)), kib(m.warmLo/int64(m.bmcs)), kib(m.warmHi/int64(m.bmcs)), mib(m.warm.Anon), mib(m.warm.File))
	}
	pairs := [][2]string{{"rmsd", "bare"}}
	if res.o.baseline != "" {
		pairs = append(pairs, [2]string{"baseline", "bare"}, [2]string{"rmsd", "baseline"})
	}
	for _, p := range pairs {
		for _, m := range []struct {
			name     string
			scenario string
			of       func(run) time.Duration
		}{
			{"one-rack CPU per call", "rack", run.cpuPerCall},
			{"one-rack p50", "rack", run.p50},
			{"whole-site warm read", "site", run.wallPerCall},
			{"whole-site warm read's CPU", "site", run.cpuPerCall},
		} {
			ratios, num, den := sidesPerRound(res.runs, m.scenario, p[0], p[1], m.of)
			med, lo, hi := spread(ratios)
			fmt.Fprintf(&b, "%s / %s, %s: %s (%s–%s); medians %s vs %s\n", p[0], p[1], m.name,
				times(med), times(lo), times(hi), ms(medianDur(num)), ms(medianDur(den)))
		}
	}
	_, err := io.WriteString(log, b.String())
	return err
}
