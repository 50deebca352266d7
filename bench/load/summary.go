package main

import (
	"math"
	"slices"
	"time"
)

// summary is every measured round of one RPC on one server, pooled.
type summary struct {
	rpc, server   string
	count, errors uint64
	rps           float64 // calls per second over all its runs
	p50, p99      time.Duration
	cpuPerCall    time.Duration   // CPU time per call until each run's last answer: the gRPC edge's cost
	cpu, cpuCalls time.Duration   // the CPU time over all its runs (an admission's jobs included), and the part of it until each run's last answer
	latencies     []time.Duration // sorted
	admitted      int             // -1 where that does not apply
	settle        time.Duration   // the longest wait for an admission run's jobs
}

// ratio compares rmsd with the bare server on one RPC: each figure is
// rmsd's divided by the bare server's.
type ratio struct {
	rpc              string
	rps              float64 // throughput: below 1 when rmsd answers fewer calls per second
	rpsMin, rpsMax   float64 // the throughput ratio of the worst and best round
	p50, p99, cpu    float64 // latency and CPU time per call: above 1 when rmsd costs more
	rmsdCPU, bareCPU time.Duration
}

// summarize pools the measurements by RPC and server, in the order the
// RPCs were first measured, rmsd before bare.
func summarize(ms []measurement) []summary {
	var order []string
	type key struct{ rpc, server string }
	pooled := map[key]*summary{}
	wall := map[key]time.Duration{}
	for _, m := range ms {
		k := key{m.rpc, m.server}
		s, ok := pooled[k]
		if !ok {
			if !slices.Contains(order, m.rpc) {
				order = append(order, m.rpc)
			}
			s = &summary{rpc: m.rpc, server: m.server, admitted: -1}
			pooled[k] = s
		}
		s.count += m.count
		s.errors += m.errors
		s.latencies = append(s.latencies, m.latencies...)
		s.cpu += m.cpu
		s.cpuCalls += m.cpuCalls
		wall[k] += m.wall
		if m.admitted >= 0 {
			s.admitted = max(s.admitted, 0) + m.admitted
		}
		s.settle = max(s.settle, m.settle)
	}
	var out []summary
	for _, rpc := range order {
		for _, server := range []string{"rmsd", "bare"} {
			k := key{rpc, server}
			s, ok := pooled[k]
			if !ok {
				continue
			}
			slices.Sort(s.latencies)
			s.p50, s.p99 = percentile(s.latencies, 0.50), percentile(s.latencies, 0.99)
			if wall[k] > 0 {
				s.rps = float64(s.count) / wall[k].Seconds()
			}
			if s.count > 0 {
				s.cpuPerCall = s.cpuCalls / time.Duration(s.count)
			}
			out = append(out, *s)
		}
	}
	return out
}

// ratios compares rmsd's summary of each RPC with the bare server's; the
// throughput range comes from the rounds, each round's rmsd run against
// the same round's bare run.
func ratios(sums []summary, ms []measurement) []ratio {
	find := func(rpc, server string) (summary, bool) {
		for _, s := range sums {
			if s.rpc == rpc && s.server == server {
				return s, true
			}
		}
		return summary{}, false
	}
	var out []ratio
	for _, s := range sums {
		if s.server != "rmsd" {
			continue
		}
		b, ok := find(s.rpc, "bare")
		if !ok {
			continue
		}
		r := ratio{rpc: s.rpc, rps: div(s.rps, b.rps), p50: div(float64(s.p50), float64(b.p50)),
			p99: div(float64(s.p99), float64(b.p99)), cpu: div(float64(s.cpuPerCall), float64(b.cpuPerCall)),
			rmsdCPU: s.cpuPerCall, bareCPU: b.cpuPerCall, rpsMin: math.Inf(1), rpsMax: math.Inf(-1)}
		perRound := map[int][2]float64{}
		for _, m := range ms {
			if m.rpc != s.rpc {
				continue
			}
			v := perRound[m.round]
			if m.server == "rmsd" {
				v[0] = m.rps()
			} else {
				v[1] = m.rps()
			}
			perRound[m.round] = v
		}
		for _, v := range perRound {
			if v[0] > 0 && v[1] > 0 {
				r.rpsMin, r.rpsMax = min(r.rpsMin, v[0]/v[1]), max(r.rpsMax, v[0]/v[1])
			}
		}
		if math.IsInf(r.rpsMin, 0) {
			r.rpsMin, r.rpsMax = math.NaN(), math.NaN()
		}
		out = append(out, r)
	}
	return out
}

// percentile is the nearest-rank q-quantile of sorted values (0 when
// there are none).
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// div is a/b, NaN when b is zero (a figure the report shows as "n/a").
func div(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}
