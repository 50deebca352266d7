package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// firmwareRatio is rmsd's throughput over the bare client's, per round.
func (res *results) firmwareRatio() (ratios []float64, rmsd, bare []float64) {
	byRound := map[int]map[string]firmwareRun{}
	for _, f := range res.firmware {
		if byRound[f.round] == nil {
			byRound[f.round] = map[string]firmwareRun{}
		}
		byRound[f.round][f.side] = f
	}
	for round := range len(byRound) {
		a, okA := byRound[round]["rmsd"]
		b, okB := byRound[round]["bare"]
		if !okA || !okB || b.throughput() <= 0 {
			continue
		}
		ratios = append(ratios, a.throughput()/b.throughput())
		rmsd, bare = append(rmsd, a.throughput()), append(bare, b.throughput())
	}
	return ratios, rmsd, bare
}

// writeFirmwareRatios adds the firmware rows to the ratio table.
func writeFirmwareRatios(b *strings.Builder, res *results) {
	if len(res.firmware) == 0 {
		return
	}
	f0 := res.firmware[0]
	ratios, rmsd, bare := res.firmwareRatio()
	med, lo, hi := spread(ratios)
	fmt.Fprintf(b, "| Firmware, %s to the %d compute trays of a rack: throughput | ≥ 0.9× | %s (%s–%s) | %s | %s |\n",
		mib(f0.bytes/int64(f0.trays)), f0.trays, times(med), times(lo), times(hi), mibps(medianOf(rmsd)), mibps(medianOf(bare)))
	var worst, bareWorst int64
	for _, f := range res.firmware {
		if f.side == "rmsd" {
			worst = max(worst, f.growth())
		} else {
			bareWorst = max(bareWorst, f.growth())
		}
	}
	fmt.Fprintf(b, "| Firmware, %s to the %d compute trays of a rack: rmsd's RSS growth during the push (largest over the rounds) | ≤ 64 MiB | %s | %s | %s |\n",
		mib(f0.bytes/int64(f0.trays)), f0.trays, mib(worst), mib(worst), mib(bareWorst))
}

// writeFirmwareRuns writes every firmware run.
func writeFirmwareRuns(b *strings.Builder, res *results) {
	if len(res.firmware) == 0 {
		return
	}
	b.WriteString("\n## Firmware\n\n| Round | Side | Trays | Pushed | Wall | Throughput | CPU | Sim cores | RSS before | RSS growth | Load average |\n" +
		"| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, f := range res.firmware {
		fmt.Fprintf(b, "| %d | %s | %d | %s | %s | %s | %s | %.2f | %s | %s | %s |\n",
			f.round, f.side, f.trays, mib(f.bytes), ms(f.wall), mibps(f.throughput()), ms(f.cpu), f.simCores(),
			mib(f.rssBefore), mib(f.growth()), f.load)
	}
}

// admissionRatio is side num's CPU per admitted node over side den's
// ("rmsd", "engine", "baseline"), per round, with both sides' figures.
func (res *results) admissionRatio(num, den string) (ratios []float64, rmsd, engine []time.Duration) {
	byRound := map[int]map[string]admission{}
	for _, a := range res.admissions {
		if byRound[a.round] == nil {
			byRound[a.round] = map[string]admission{}
		}
		byRound[a.round][a.side] = a
	}
	for round := range len(byRound) {
		a, okA := byRound[round][num]
		e, okE := byRound[round][den]
		if !okA || !okE || e.perNode() <= 0 {
			continue
		}
		ratios = append(ratios, float64(a.perNode())/float64(e.perNode()))
		rmsd, engine = append(rmsd, a.perNode()), append(engine, e.perNode())
	}
	return ratios, rmsd, engine
}

// writeAdmissionRatio adds the admission row to the ratio table.
func writeAdmissionRatio(b *strings.Builder, res *results) {
	if len(res.admissions) == 0 {
		return
	}
	ratios, rmsd, engine := res.admissionRatio("rmsd", "engine")
	med, lo, hi := spread(ratios)
	fmt.Fprintf(b, "| BatchUpdateFirmware of %d nodes through gRPC: server CPU per admitted node, against the engine's own admission per job (bare column) | ≤ 2× | %s (%s–%s; least rounds %s) | %s | %s |\n",
		res.admissions[0].nodes, times(med), times(lo), times(hi), times(leastRatio(rmsd, engine)), us(medianDur(rmsd)), us(medianDur(engine)))
}

// leastRatio is the least of num over the least of den: each side's round
// with the least of what only adds to an admission's CPU time (released
// children that ran before the reading, a collection of earlier garbage,
// a neighbour's cache misses), against the other's. NaN when either is
// empty.
func leastRatio(num, den []time.Duration) float64 {
	if len(num) == 0 || leastDur(den) <= 0 {
		return math.NaN()
	}
	return float64(leastDur(num)) / float64(leastDur(den))
}

// leastDur is the least of ds, 0 when empty.
func leastDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return slices.Min(ds)
}

// writeAdmissionRuns writes every admission round.
func writeAdmissionRuns(b *strings.Builder, res *results) {
	if len(res.admissions) == 0 {
		return
	}
	b.WriteString("\n## Admission\n\n| Round | Side | Nodes | Wall | CPU | CPU per node | Load average |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, a := range res.admissions {
		fmt.Fprintf(b, "| %d | %s | %d | %s | %s | %s | %s |\n", a.round, a.side, a.nodes, ms(a.wall), ms(a.cpu), us(a.perNode()), a.load)
	}
}

// spread is the median, least and largest of xs (NaN when empty).
func spread(xs []float64) (med, lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	return median(s), s[0], s[len(s)-1]
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return median(slices.Sorted(slices.Values(xs)))
}

func mibps(bytesPerSecond float64) string {
	if math.IsNaN(bytesPerSecond) {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB/s", bytesPerSecond/(1<<20))
}
