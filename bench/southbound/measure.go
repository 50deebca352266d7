package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rmsd/rmsd/bench/procstat"
)

// run is one measured run of a scenario on one side (rmsd or bare).
type run struct {
	scenario string
	side     string // "rmsd" or "bare"
	round    int
	lat      []time.Duration // one per call, sorted
	wall     time.Duration   // the whole run
	cpu      time.Duration   // the side's CPU time over the run
	simCPU   time.Duration   // the simulators' CPU time over the run
	load     string          // /proc/loadavg when the run ended
}

// calls is how many calls the run made.
func (r run) calls() int { return len(r.lat) }

// p50 is the median latency.
func (r run) p50() time.Duration { return percentile(r.lat, 0.5) }

// cpuPerCall is the side's CPU time per call.
func (r run) cpuPerCall() time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.cpu / time.Duration(len(r.lat))
}

// wallPerCall is the run's wall time per call.
func (r run) wallPerCall() time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.wall / time.Duration(len(r.lat))
}

// simCores is how many cores the simulators kept busy on average.
func (r run) simCores() float64 {
	if r.wall <= 0 {
		return 0
	}
	return float64(r.simCPU) / float64(r.wall)
}

// timed runs calls calls of call, one after the other, measuring the CPU
// time of pid (its threads' run time, to the nanosecond) and of the
// simulators.
func timed(ctx context.Context, scenario, side string, round, calls, pid int, s *sims, call func(context.Context) error) (run, error) {
	r := run{scenario: scenario, side: side, round: round}
	cpu0, err := procstat.RunTime(pid)
	if err != nil {
		return r, err
	}
	sim0, err := s.cpu()
	if err != nil {
		return r, err
	}
	start := time.Now()
	for range calls {
		t := time.Now()
		if err := call(ctx); err != nil {
			return r, fmt.Errorf("%s on %s: %w", scenario, side, err)
		}
		r.lat = append(r.lat, time.Since(t))
	}
	r.wall = time.Since(start)
	cpu1, err := procstat.RunTime(pid)
	if err != nil {
		return r, err
	}
	sim1, err := s.cpu()
	if err != nil {
		return r, err
	}
	r.cpu, r.simCPU, r.load = cpu1-cpu0, sim1-sim0, loadAverage()
	slices.Sort(r.lat)
	return r, nil
}

// percentile is the q-quantile of sorted (nearest rank).
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// loadAverage is the 1, 5 and 15 minute load average.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

// contender is one side of an interleaved measurement.
type contender struct {
	name string
	pid  int
	call func(context.Context) error
}

// interleaved runs calls calls of every contender's call in turns of
// block calls each, contenders[first] first, until each has made its
// calls, and returns one run per contender, in contenders' order: its
// latencies, and its wall, CPU and simulator time summed over its turns.
// Taking turns often puts every side under the same conditions of the
// machine (another process's burst, a slower period), which rounds of
// hundreds of calls one side after the other do not.
func interleaved(ctx context.Context, scenario string, round, calls, block, first int, s *sims, cs []contender) ([]run, error) {
	runs := make([]run, len(cs))
	for i, c := range cs {
		runs[i] = run{scenario: scenario, side: c.name, round: round}
	}
	block = max(1, block)
	for done := 0; done < calls; done += block {
		n := min(block, calls-done)
		for k := range cs {
			i := (first + k) % len(cs)
			part, err := timed(ctx, scenario, cs[i].name, round, n, cs[i].pid, s, cs[i].call)
			if err != nil {
				return nil, err
			}
			r := &runs[i]
			r.lat = append(r.lat, part.lat...)
			r.wall += part.wall
			r.cpu += part.cpu
			r.simCPU += part.simCPU
			r.load = part.load
		}
	}
	for i := range runs {
		slices.Sort(runs[i].lat)
	}
	return runs, nil
}
