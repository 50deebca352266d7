package main

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"time"
)

// ratio is rmsd/bare over the alternated rounds: the median and range of
// the per-round ratios.
type ratio struct {
	what, target   string
	med, lo, hi    float64
	rmsdMed, bareM string // the median figures themselves
}

// perRound pairs the rmsd and bare runs of one scenario by round and
// returns of(rmsd)/of(bare) for each round.
func perRound(runs []run, scenario string, of func(run) time.Duration) (ratios []float64, rmsd, bare []time.Duration) {
	return sidesPerRound(runs, scenario, "rmsd", "bare", of)
}

// sidesPerRound pairs the runs of sides num and den of one scenario by
// round and returns of(num)/of(den) for each round, with both figures.
func sidesPerRound(runs []run, scenario, num, den string, of func(run) time.Duration) (ratios []float64, nums, dens []time.Duration) {
	byRound := map[int]map[string]run{}
	for _, r := range runs {
		if r.scenario != scenario {
			continue
		}
		if byRound[r.round] == nil {
			byRound[r.round] = map[string]run{}
		}
		byRound[r.round][r.side] = r
	}
	for round := range len(byRound) {
		a, okA := byRound[round][num]
		b, okB := byRound[round][den]
		if !okA || !okB {
			continue
		}
		nums, dens = append(nums, of(a)), append(dens, of(b))
		if of(b) > 0 {
			ratios = append(ratios, float64(of(a))/float64(of(b)))
		}
	}
	return ratios, nums, dens
}

func summarise(what, target string, ratios []float64, rmsd, bare []time.Duration) ratio {
	r := ratio{what: what, target: target, med: math.NaN(), lo: math.NaN(), hi: math.NaN(),
		rmsdMed: ms(medianDur(rmsd)), bareM: ms(medianDur(bare))}
	if len(ratios) > 0 {
		s := slices.Sorted(slices.Values(ratios))
		r.med, r.lo, r.hi = median(s), s[0], s[len(s)-1]
	}
	return r
}

// ratios computes every rmsd/bare ratio of the report.
func (res *results) ratios() []ratio {
	var out []ratio
	add := func(what, target string, runs []run, scenario string, of func(run) time.Duration) {
		rs, a, b := perRound(runs, scenario, of)
		out = append(out, summarise(what, target, rs, a, b))
	}
	add("BatchGetPowerState, one rack (35 nodes): server CPU per call", "≤ 1.3×", res.runs, "rack", run.cpuPerCall)
	add("BatchGetPowerState, one rack (35 nodes): p50 latency", "≤ 1.2×", res.runs, "rack", run.p50)
	add(fmt.Sprintf("Whole-site power read, %d racks: wall time, warm", res.o.siteRacks), "≤ 1.2×", res.runs, "site", run.wallPerCall)
	add(fmt.Sprintf("Whole-site power read, %d racks: wall time, first read after start", res.o.siteRacks), "≤ 1.2×", res.first, "first",
		func(r run) time.Duration { return r.wall })
	add(fmt.Sprintf("Whole-site power read, %d racks: process CPU, warm", res.o.siteRacks), "", res.runs, "site", run.cpuPerCall)
	return out
}

// slope is a least-squares line y = a + b·x and how well it fits (R²).
type slope struct{ a, b, r2 float64 }

func fit(xs, ys []float64) slope {
	n := float64(len(xs))
	if n < 2 {
		return slope{math.NaN(), math.NaN(), math.NaN()}
	}
	var sx, sy, sxx, sxy, syy float64
	for i := range xs {
		sx, sy = sx+xs[i], sy+ys[i]
		sxx, sxy, syy = sxx+xs[i]*xs[i], sxy+xs[i]*ys[i], syy+ys[i]*ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return slope{math.NaN(), math.NaN(), math.NaN()}
	}
	b := (n*sxy - sx*sy) / den
	a := (sy - b*sx) / n
	var ssRes, ssTot float64
	mean := sy / n
	for i := range xs {
		e := ys[i] - (a + b*xs[i])
		ssRes += e * e
		ssTot += (ys[i] - mean) * (ys[i] - mean)
	}
	r2 := 1.0
	if ssTot > 0 {
		r2 = 1 - ssRes/ssTot
	}
	return slope{a, b, r2}
}

// scaleSlopes fits rmsd's warm RSS (KiB), warm read (ms) and start time
// (ms) against the number of BMCs.
func (res *results) scaleSlopes() (rss, read, ready slope) {
	var x, yRSS, yRead, yReady []float64
	for _, p := range res.scale {
		x = append(x, float64(p.bmcs))
		yRSS = append(yRSS, float64(p.warmRSS)/1024)
		yRead = append(yRead, float64(p.warm)/float64(time.Millisecond))
		yReady = append(yReady, float64(p.ready)/float64(time.Millisecond))
	}
	return fit(x, yRSS), fit(x, yRead), fit(x, yReady)
}

// render writes southbound.md.
func render(w io.Writer, res *results, chart string) error {
	var b strings.Builder
	o := res.o
	fmt.Fprintf(&b, "# Southbound: rmsd's own cost against a bare client\n\n")
	fmt.Fprintf(&b, "Written by `task bench:southbound` (`cd bench && go run ./southbound`) on %s, %d CPUs, %s; "+
		"%s to %s UTC; load average %s before the run and %s after it. "+
		"Figures on a shared machine are provisional: compare the ratios, not the absolute times.\n\n",
		runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(),
		res.start.UTC().Format("2006-01-02 15:04"), res.end.UTC().Format("15:04"), res.loadBefore, loadAverage())
	b.WriteString("## Method\n\n" +
		"rmsd (a real process, plaintext gRPC on loopback, SQLite store, info logging) and the bare client " +
		"(`bench/bareclient`: the same Redfish requests per node as rmsd's `hw/redfish`, HTTPS/1.1 without " +
		"certificate verification, two idle connections per BMC, 256 node reads in flight, no gRPC, engine or " +
		"journal) both drive the same `rmssim` processes, which run apart so neither pays for the simulator; " +
		"the simulators' CPU is measured apart (the `sim cores` column: how many cores they kept busy during a run). " +
		"rmsd gets the nodes with `CreateNodes` (one call per rack) and reads them with one `BatchGetPowerState` " +
		"per rack, all racks at once; the bare client reads the same nodes with the same concurrency. " +
		"A side's CPU time is the run time of its threads (`/proc/<pid>/task/*/schedstat`, to the nanosecond), the simulators' is utime+stime from `/proc/<pid>/stat` (10 ms ticks); memory is VmRSS. " +
		"Every scenario alternates rmsd and the bare client round by round (who goes first alternates too); " +
		"within a round of the warm scenarios the two sides take turns, a few one-rack calls (-turn) or one " +
		"whole-site read at a time, so that a slower spell of the machine falls on both; a whole-site figure " +
		"is the mean over a side's reads of the round. " +
		"A ratio is rmsd/bare per round, given as the median and the range over the rounds.\n\n" +
		"Firmware: one package pushed to every compute tray of a rack at once, by rmsd's `BatchUpdateFirmware` " +
		"(force_update, no activation; the harness waits for the parent job to end) and by the bare client " +
		"(rmsd's requests per tray: the update preconditions, the update service, one multipart push with a " +
		"Content-Length streamed from the file, then the task every second until it ends, as rmsd's " +
		"task_poll_interval_seconds = 1). The simulators run 10,000 times faster than real time, so a " +
		"flash takes 60 ms and the upload is what is timed. Throughput is the bytes pushed over the wall time; " +
		"the ratio is rmsd's over the bare client's. RSS growth is the largest VmRSS sampled every 20 ms " +
		"during the push less VmRSS before it.\n\n" +
		"Admission: one `BatchUpdateFirmware` of compute trays through gRPC, rmsd's CPU time (its threads' " +
		"run time, to the nanosecond) from the call until the harness has the answer, per admitted node, against " +
		"`bench/engineadmit`, the job engine alone in a process of its own (the same `CreateBatch` of one child " +
		"per node, its journal on SQLite and its log at info level in a file, as rmsd's), its CPU time from the " +
		"call until every child has started, per child. Both are whole-process CPU time, so the ratio is what " +
		"gRPC, validation, planning, the reply and the audit record add to the engine's own admission. rmsd holds " +
		"a batch's children until the RPC has answered, runs at a lower priority than the harness, and lets one " +
		"BMC operation through at a time, and the trays' BMC addresses lead to a listener that never accepts, " +
		"so no child does hardware work while the admission is measured; what the released children do before " +
		"the harness's reading (their progress record, the package opened) still races it, so the least round " +
		"of each side is compared too. Between rounds, untimed, rmsd's batch is cancelled and the engine's " +
		"children released, and each side is left to settle. A warm-up round on each side is not counted.\n\n")
	fmt.Fprintf(&b, "Settings: %d racks for the whole site (%d BMCs), %d calls per one-rack run in turns of %d, "+
		"%d warm whole-site reads per side and round, %d rounds, "+
		"%d first-read rounds, scale curve at %v racks, a %d MiB firmware package, %d nodes admitted.\n\n",
		o.siteRacks, o.siteRacks*35, o.rackCalls, max(1, o.turn), max(1, o.siteReads), o.rounds, o.firstRounds, o.scale, o.firmwareMiB, o.admitNodes)

	b.WriteString("## Ratios (rmsd / bare)\n\n| What | Target | Ratio (median, range) | rmsd | bare |\n| --- | --- | --- | --- | --- |\n")
	for _, r := range res.ratios() {
		target := r.target
		if target == "" {
			target = "-"
		}
		fmt.Fprintf(&b, "| %s | %s | %s (%s–%s) | %s | %s |\n", r.what, target, times(r.med), times(r.lo), times(r.hi), r.rmsdMed, r.bareM)
	}
	for _, m := range res.memory {
		if m.side != "rmsd" {
			continue
		}
		fmt.Fprintf(&b, "| rmsd's RSS per managed BMC, %d BMCs with their connections pooled (median of the rounds) | ≤ 64 KiB | %s (%s–%s; %s in all; %s after start) | | |\n",
			m.bmcs, kib(m.warm/int64(m.bmcs)), kib(m.warmLo/int64(m.bmcs)), kib(m.warmHi/int64(m.bmcs)), mib(m.warm), mib(m.idle))
	}
	writeFirmwareRatios(&b, res)
	writeAdmissionRatio(&b, res)
	b.WriteString("\n## Runs\n\n| Scenario | Round | Side | Calls | Wall | p50 | CPU per call | Sim cores | Load average |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range append(slices.Clone(res.runs), res.first...) {
		fmt.Fprintf(&b, "| %s | %d | %s | %d | %s | %s | %s | %.2f | %s |\n",
			r.scenario, r.round, r.side, r.calls(), ms(r.wall), ms(r.p50()), ms(r.cpuPerCall()), r.simCores(), r.load)
	}
	writeFirmwareRuns(&b, res)
	writeAdmissionRuns(&b, res)
	b.WriteString("\n## Memory\n\nThe resident set with connections pooled is taken after each round; the table shows the median round's and the range.\n\n" +
		"| Side | BMCs | RSS after start | RSS with connections pooled (range) | Per BMC | Load average |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, m := range res.memory {
		fmt.Fprintf(&b, "| %s | %d | %s | %s (%s–%s) | %s | %s |\n", m.side, m.bmcs, mib(m.idle), mib(m.warm), mib(m.warmLo), mib(m.warmHi), kib(m.warm/int64(m.bmcs)), m.load)
	}
	b.WriteString("\n## Scale curve\n\n")
	if chart != "" {
		fmt.Fprintf(&b, "![scale](%s)\n\n", chart)
	}
	b.WriteString("| Racks | BMCs | rmsd ready (exec to serving, every rack registered) | RSS after start | RSS warm | Whole-site read, first | warm | bare warm | Load average |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, p := range res.scale {
		fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %s | %s | %s | %s |\n",
			p.racks, p.bmcs, ms(p.ready), mib(p.idleRSS), mib(p.warmRSS), ms(p.first), ms(p.warm), ms(p.bareWarm), p.load)
	}
	rss, read, ready := res.scaleSlopes()
	fmt.Fprintf(&b, "\nLeast-squares lines over the curve, against the number of BMCs: RSS %.1f KiB per BMC (R² %.3f), "+
		"warm whole-site read %.3f ms per BMC (R² %.3f), start %.3f ms per BMC (R² %.3f).\n",
		rss.b, rss.r2, read.b, read.r2, ready.b, ready.r2)
	_, err := io.WriteString(w, b.String())
	return err
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func medianDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2]
}

func times(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", f)
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func us(d time.Duration) string {
	return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond))
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func kib(b int64) string { return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10)) }
