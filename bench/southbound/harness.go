package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/rmsd/rmsd/bench/launch"
	"github.com/rmsd/rmsd/bench/procstat"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// options are the harness's flags.
type options struct {
	root        string // the rmsd module's root
	out         string // where southbound.md and the chart go
	siteRacks   int
	rackCalls   int
	rounds      int
	turn        int // one-rack calls a side makes per turn within a round
	siteReads   int // whole-site reads per side and round, one per turn
	firstRounds int
	scale       []int
	network     int
	keep        bool
	firmwareMiB int // the firmware scenario's package
	admitNodes  int // the admission scenario's batch
	// only, when "admission" or "memory", runs that scenario alone and
	// writes no report (southbound.md is the whole harness's).
	only     string
	baseline string   // a second rmsd binary for the admission or memory scenario
	perfDir  string   // where perf profiles of the admission windows go
	heapDir  string   // where the memory scenario saves rmsd's heap profile
	cpuDir   string   // where the memory scenario saves rmsd's CPU profile of one-rack reads
	cpuSecs  int      // how long that profile is
	rmsdEnv  []string // added to the memory scenario's rmsd's environment
}

// results is everything one harness run measured.
type results struct {
	o          options
	start, end time.Time
	loadBefore string
	runs       []run    // rack and site runs, both sides, every round
	first      []run    // first reads after start, both sides
	memory     []memory // resident sets after warm site reads
	scale      []scalePoint
	firmware   []firmwareRun // both sides, every round
	admissions []admission   // rmsd and the engine alone, every round
	breakdowns []breakdown   // -only memory: each side's resident set
}

// memory is one side's resident set with the site's connections pooled.
type memory struct {
	side string
	bmcs int
	idle int64 // after start (rmsd: and registration)
	// warm is the median of the resident sets taken after each warm round
	// (residentSamples), warmLo and warmHi their range.
	warm, warmLo, warmHi int64
	load                 string
}

// scalePoint is one size of the scale curve.
type scalePoint struct {
	racks, bmcs      int
	ready            time.Duration // rmsd: exec until serving with every rack registered
	idleRSS, warmRSS int64         // rmsd
	first, warm      time.Duration // rmsd's whole-site reads
	bareWarm         time.Duration
	load             string
}

// harness holds the binaries, the simulators and the log sink.
type harness struct {
	o             options
	dir           string
	rmsd, bareBin string
	engineBin     string // bench/engineadmit
	sims          *sims
	log           io.Writer
}

func runHarness(ctx context.Context, o options, log io.Writer) (*results, error) {
	res := &results{o: o, start: time.Now(), loadBefore: loadAverage()}
	dir, err := os.MkdirTemp("", "southbound-")
	if err != nil {
		return nil, err
	}
	if o.keep {
		fmt.Fprintf(log, "keeping %s\n", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	h := &harness{o: o, dir: dir, log: log}
	fmt.Fprintf(log, "building rmsd, rmssim, the bare client and engineadmit\n")
	if o.baseline != "" {
		if _, err := os.Stat(o.baseline); err != nil {
			return nil, fmt.Errorf("-baseline: %w", err)
		}
	}
	if h.rmsd, err = launch.Build(ctx, o.root, "./cmd/rmsd", dir); err != nil {
		return nil, err
	}
	sim, err := launch.Build(ctx, o.root, "./cmd/rmssim", dir)
	if err != nil {
		return nil, err
	}
	if h.bareBin, err = launch.Build(ctx, filepath.Join(o.root, "bench"), "./bareclient", dir); err != nil {
		return nil, err
	}
	if h.engineBin, err = launch.Build(ctx, filepath.Join(o.root, "bench"), "./engineadmit", dir); err != nil {
		return nil, err
	}
	most := slices.Max(append([]int{o.siteRacks}, o.scale...))
	switch o.only {
	case "admission":
		most = 1 // the batch's trays are one rack's, taken in turn
	case "memory":
		most = o.siteRacks
	}
	fmt.Fprintf(log, "starting %d simulated racks (%d BMCs)\n", most, most*35)
	if h.sims, err = startSims(ctx, sim, dir, most, o.network); err != nil {
		return nil, err
	}
	defer h.sims.stop()

	switch o.only {
	case "admission":
		err := h.admissionScenario(ctx, res)
		res.end = time.Now()
		return res, err
	case "memory":
		err := h.memoryScenario(ctx, res)
		res.end = time.Now()
		return res, err
	}
	if err := h.warmScenarios(ctx, res); err != nil {
		return nil, err
	}
	if err := h.firmwareScenario(ctx, res); err != nil {
		return nil, err
	}
	if err := h.admissionScenario(ctx, res); err != nil {
		return nil, err
	}
	if err := h.firstReads(ctx, res); err != nil {
		return nil, err
	}
	if err := h.scaleCurve(ctx, res); err != nil {
		return nil, err
	}
	res.end = time.Now()
	return res, nil
}

// site is the first n racks.
func (h *harness) site(n int) []*rmspb.NodeSet { return h.sims.racks[:n] }

// bmcs counts the nodes of the first n racks.
func (h *harness) bmcs(n int) int { return len(h.sims.nodes(n).GetNodes()) }

// bare starts a bare client on the first n racks.
func (h *harness) bare(ctx context.Context, n int) (*bare, error) {
	f := filepath.Join(h.dir, fmt.Sprintf("site-%d.json", n))
	if _, err := os.Stat(f); err != nil {
		if err := h.sims.writeNodes(f, n); err != nil {
			return nil, err
		}
	}
	return startBare(ctx, h.bareBin, h.dir, f)
}

// warmScenarios runs, on one rmsd and one bare client that manage the
// site, the one-rack read and the warm whole-site read in alternated
// rounds, and takes both resident sets.
func (h *harness) warmScenarios(ctx context.Context, res *results) error {
	racks := h.site(h.o.siteRacks)
	d, err := startDaemon(ctx, h.rmsd, h.dir, racks, defaultBMCRequests)
	if err != nil {
		return err
	}
	defer d.close()
	b, err := h.bare(ctx, h.o.siteRacks)
	if err != nil {
		return err
	}
	defer b.Stop()
	n := h.bmcs(h.o.siteRacks)
	mem := []memory{{side: "rmsd", bmcs: n}, {side: "bare", bmcs: n}}
	if mem[0].idle, err = procstat.RSS(d.PID()); err != nil {
		return err
	}
	if mem[1].idle, err = procstat.RSS(b.PID()); err != nil {
		return err
	}
	rack := racks[0]
	rackID := rack.GetNodes()[0].GetRackId()
	sides := []struct {
		name      string
		pid       int
		rack      func(context.Context) error
		wholeSite func(context.Context) error
	}{
		{"rmsd", d.PID(),
			func(ctx context.Context) error { return d.readPower(ctx, racks[:1]) },
			func(ctx context.Context) error { return d.readPower(ctx, racks) }},
		{"bare", b.PID(),
			func(ctx context.Context) error { return b.readPower(ctx, rackID, len(rack.GetNodes())) },
			func(ctx context.Context) error { return b.readPower(ctx, "*", n) }},
	}
	// Warm up: every connection of the site pooled on both sides.
	for _, s := range sides {
		if err := s.wholeSite(ctx); err != nil {
			return fmt.Errorf("warm-up of %s: %w", s.name, err)
		}
	}
	racksOf, sitesOf := make([]contender, len(sides)), make([]contender, len(sides))
	for i, s := range sides {
		racksOf[i] = contender{name: s.name, pid: s.pid, call: s.rack}
		sitesOf[i] = contender{name: s.name, pid: s.pid, call: s.wholeSite}
	}
	samples := make([]residentSamples, len(sides))
	for round := range h.o.rounds {
		first := round % len(sides) // alternate who goes first
		rs, err := interleaved(ctx, "rack", round, h.o.rackCalls, h.o.turn, first, h.sims, racksOf)
		if err != nil {
			return err
		}
		ss, err := interleaved(ctx, "site", round, max(1, h.o.siteReads), 1, first, h.sims, sitesOf)
		if err != nil {
			return err
		}
		for _, r := range append(rs, ss...) {
			h.print(r)
			res.runs = append(res.runs, r)
		}
		for i, s := range sides {
			if err := samples[i].take(s.pid); err != nil {
				return err
			}
		}
	}
	for i := range mem {
		med, lo, hi := samples[i].summary()
		mem[i].warm, mem[i].warmLo, mem[i].warmHi = med.Total, lo, hi
		mem[i].load = loadAverage()
		fmt.Fprintf(h.log, "memory %s: %s after start, %s with %d BMCs' connections pooled (%s per BMC; median of %d rounds, %s–%s); load %s\n",
			mem[i].side, mib(mem[i].idle), mib(mem[i].warm), n, kib(mem[i].warm/int64(n)), len(samples[i]), mib(mem[i].warmLo), mib(mem[i].warmHi), mem[i].load)
	}
	res.memory = mem
	return nil
}

// firstReads times the first whole-site read of a freshly started rmsd and
// bare client (every TLS handshake in it), in alternated rounds.
func (h *harness) firstReads(ctx context.Context, res *results) error {
	racks := h.site(h.o.siteRacks)
	n := h.bmcs(h.o.siteRacks)
	for round := range h.o.firstRounds {
		for i := range 2 {
			var r run
			var err error
			if (i+round)%2 == 0 {
				r, err = h.firstRMSD(ctx, round, racks)
			} else {
				r, err = h.firstBare(ctx, round, n)
			}
			if err != nil {
				return err
			}
			h.print(r)
			res.first = append(res.first, r)
		}
	}
	return nil
}

func (h *harness) firstRMSD(ctx context.Context, round int, racks []*rmspb.NodeSet) (run, error) {
	d, err := startDaemon(ctx, h.rmsd, h.dir, racks, defaultBMCRequests)
	if err != nil {
		return run{}, err
	}
	defer d.close()
	return timed(ctx, "first", "rmsd", round, 1, d.PID(), h.sims, func(ctx context.Context) error { return d.readPower(ctx, racks) })
}

func (h *harness) firstBare(ctx context.Context, round, n int) (run, error) {
	b, err := h.bare(ctx, h.o.siteRacks)
	if err != nil {
		return run{}, err
	}
	defer b.Stop()
	return timed(ctx, "first", "bare", round, 1, b.PID(), h.sims, func(ctx context.Context) error { return b.readPower(ctx, "*", n) })
}

// scaleCurve starts rmsd on 1, 10, … racks: its start time, resident set
// and whole-site reads, beside a bare client's warm read.
func (h *harness) scaleCurve(ctx context.Context, res *results) error {
	for _, n := range h.o.scale {
		racks := h.site(n)
		p := scalePoint{racks: n, bmcs: h.bmcs(n)}
		d, err := startDaemon(ctx, h.rmsd, h.dir, racks, defaultBMCRequests)
		if err != nil {
			return err
		}
		err = func() error {
			defer d.close()
			p.ready = d.ready
			var err error
			if p.idleRSS, err = procstat.RSS(d.PID()); err != nil {
				return err
			}
			if p.first, err = wallOf(ctx, func(ctx context.Context) error { return d.readPower(ctx, racks) }); err != nil {
				return err
			}
			if p.warm, err = wallOf(ctx, func(ctx context.Context) error { return d.readPower(ctx, racks) }); err != nil {
				return err
			}
			p.warmRSS, err = procstat.RSS(d.PID())
			return err
		}()
		if err != nil {
			return err
		}
		b, err := h.bare(ctx, n)
		if err != nil {
			return err
		}
		if err := b.readPower(ctx, "*", p.bmcs); err != nil {
			_ = b.Stop()
			return err
		}
		p.bareWarm, err = wallOf(ctx, func(ctx context.Context) error { return b.readPower(ctx, "*", p.bmcs) })
		_ = b.Stop()
		if err != nil {
			return err
		}
		p.load = loadAverage()
		fmt.Fprintf(h.log, "scale %d racks (%d BMCs): rmsd ready in %s, RSS %s idle and %s warm, whole-site read %s first and %s warm; bare warm %s; load %s\n",
			p.racks, p.bmcs, ms(p.ready), mib(p.idleRSS), mib(p.warmRSS), ms(p.first), ms(p.warm), ms(p.bareWarm), p.load)
		res.scale = append(res.scale, p)
	}
	return nil
}

// wallOf times one call.
func wallOf(ctx context.Context, call func(context.Context) error) (time.Duration, error) {
	t := time.Now()
	err := call(ctx)
	return time.Since(t), err
}

// print writes one run's figures to the log as they are taken.
func (h *harness) print(r run) {
	fmt.Fprintf(h.log, "%-5s round %d %-4s: %d calls in %s, p50 %s, CPU %s per call, simulators %.2f cores; load %s\n",
		r.scenario, r.round, r.side, r.calls(), ms(r.wall), ms(r.p50()), ms(r.cpuPerCall()), r.simCores(), r.load)
}
