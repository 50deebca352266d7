package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rmsd/rmsd/bench/procstat"
)

// breakdown is where one side's resident set goes with the site's
// connections pooled: anonymous and file-backed pages, and for an rmsd
// what its Go runtime reports at /metrics (go_memstats_*, go_goroutines).
type breakdown struct {
	side string
	bmcs int
	idle procstat.Resident // after start (rmsd: and registration)
	warm procstat.Resident // after the warm reads: the median round's (residentSamples)
	// warmLo and warmHi are the range of the rounds' totals.
	warmLo, warmHi int64
	// rmsd only, read after warm: bytes of heap spans in use, of live and
	// not yet collected objects, of goroutine stacks, of everything the
	// runtime took from the OS (heap released back included), and the
	// heap target of the next collection.
	heapInuse, heapAlloc, heapReleased, stacks, sys, nextGC int64
	goroutines                                              int64
	load                                                    string
}

// runtimeFigures are the go_* families read into a breakdown.
var runtimeFigures = []struct {
	name string
	to   func(*breakdown) *int64
}{
	{"go_memstats_heap_inuse_bytes", func(b *breakdown) *int64 { return &b.heapInuse }},
	{"go_memstats_heap_alloc_bytes", func(b *breakdown) *int64 { return &b.heapAlloc }},
	{"go_memstats_heap_released_bytes", func(b *breakdown) *int64 { return &b.heapReleased }},
	{"go_memstats_stack_inuse_bytes", func(b *breakdown) *int64 { return &b.stacks }},
	{"go_memstats_sys_bytes", func(b *breakdown) *int64 { return &b.sys }},
	{"go_memstats_next_gc_bytes", func(b *breakdown) *int64 { return &b.nextGC }},
	{"go_goroutines", func(b *breakdown) *int64 { return &b.goroutines }},
}

// memorySide is one process of the memory scenario.
type memorySide struct {
	name       string
	pid        int
	d          *daemon // nil for the bare client
	stop       func() error
	rack, site func(context.Context) error
	b          breakdown
	samples    residentSamples // after each round
	prof       *profiler       // with -perf: this side's whole-site reads
}

// memoryScenario (-only memory) measures the resident sets of the warm
// whole-site scenario alone: rmsd, a -baseline rmsd if given (the before
// of a change) and the bare client each manage the -site-racks racks,
// read the whole site once to pool every connection, then take the warm
// scenario's alternated rounds (-rack-calls one-rack reads and
// -site-reads whole-site reads per side and round, timed with their CPU);
// their resident sets, split into anonymous and file-backed pages, are
// taken after each round and the median round's reported
// (residentSamples), with each rmsd's runtime figures beside them.
// o.rmsdEnv is added to the first rmsd's environment (GOGC=50 …). With o.heapDir, that rmsd runs
// with [metrics] pprof and its heap profile (<dir>/rmsd.heap.pb.gz) and
// goroutine counts (<dir>/rmsd.goroutine.txt) are saved, and the heap
// profile's top entries printed, and every side's memory mappings are
// saved (<dir>/<side>.smaps: which pages are the binary's, which the
// heap's); with o.cpuDir, it runs with pprof too
// and, after the rounds, its CPU profile of one-rack reads alone is
// saved and printed (saveCPUProfile).
func (h *harness) memoryScenario(ctx context.Context, res *results) error {
	racks := h.site(h.o.siteRacks)
	n := h.bmcs(h.o.siteRacks)
	names := []string{"rmsd"}
	if h.o.baseline != "" {
		names = append(names, "baseline")
	}
	names = append(names, "bare")
	var sides []*memorySide
	defer func() {
		for _, s := range sides {
			_ = s.stop()
		}
	}()
	for _, name := range names {
		s := &memorySide{name: name, b: breakdown{side: name, bmcs: n}}
		switch name {
		case "bare":
			c, err := h.bare(ctx, h.o.siteRacks)
			if err != nil {
				return err
			}
			s.pid, s.stop = c.PID(), c.Stop
			rackID := racks[0].GetNodes()[0].GetRackId()
			s.rack = func(ctx context.Context) error { return c.readPower(ctx, rackID, len(racks[0].GetNodes())) }
			s.site = func(ctx context.Context) error { return c.readPower(ctx, "*", n) }
		default:
			bin, env := h.rmsd, h.o.rmsdEnv
			if name == "baseline" {
				bin, env = h.o.baseline, nil
			} else if h.o.heapDir != "" || h.o.cpuDir != "" {
				env = append(env, "RMS_METRICS__PPROF=true")
			}
			d, err := startDaemon(ctx, bin, h.dir, racks, defaultBMCRequests, env...)
			if err != nil {
				return err
			}
			s.d, s.pid, s.stop = d, d.PID(), d.close
			s.rack = func(ctx context.Context) error { return d.readPower(ctx, racks[:1]) }
			s.site = func(ctx context.Context) error { return d.readPower(ctx, racks) }
		}
		sides = append(sides, s)
		var err error
		if s.b.idle, err = procstat.ResidentSet(s.pid); err != nil {
			return err
		}
		if h.o.perfDir != "" {
			if err := os.MkdirAll(h.o.perfDir, 0o755); err != nil {
				return fmt.Errorf("-perf: %w", err)
			}
			if s.prof, err = startProfiler(ctx, s.pid, filepath.Join(h.o.perfDir, name+".perf.data")); err != nil {
				return err
			}
			defer func() {
				if err := s.prof.stop(); err != nil {
					fmt.Fprintf(h.log, "memory: %v\n", err)
				}
			}()
		}
	}
	for _, s := range sides {
		if err := s.site(ctx); err != nil {
			return fmt.Errorf("warm-up of %s: %w", s.name, err)
		}
	}
	for round := range h.o.rounds {
		first := round % len(sides) // alternate who goes first
		for _, scenario := range []string{"rack", "site"} {
			calls, turn := h.o.rackCalls, h.o.turn
			cs := make([]contender, len(sides))
			for i, s := range sides {
				cs[i] = contender{name: s.name, pid: s.pid, call: s.rack}
				if scenario == "site" {
					cs[i].call, calls, turn = s.site, max(1, h.o.siteReads), 1
					if s.prof != nil { // with -perf: this side's whole-site reads alone
						cs[i].call = profiled(s.prof, s.site)
					}
				}
			}
			runs, err := interleaved(ctx, scenario, round, calls, turn, first, h.sims, cs)
			if err != nil {
				return err
			}
			for _, r := range runs {
				h.print(r)
				res.runs = append(res.runs, r)
			}
		}
		for _, s := range sides {
			if err := s.samples.take(s.pid); err != nil {
				return err
			}
		}
	}
	for _, s := range sides {
		s.b.warm, s.b.warmLo, s.b.warmHi = s.samples.summary()
		s.b.load = loadAverage()
		if h.o.heapDir != "" {
			if err := saveMappings(s.pid, filepath.Join(h.o.heapDir, s.name+".smaps")); err != nil {
				return err
			}
		}
	}
	for _, s := range sides {
		if s.d != nil {
			if err := s.d.runtimeFigures(ctx, &s.b); err != nil {
				return err
			}
			if h.o.heapDir != "" && s.name == "rmsd" {
				if err := h.saveProfiles(ctx, s.d, s.name); err != nil {
					return err
				}
			}
			if h.o.cpuDir != "" && s.name == "rmsd" {
				if err := h.saveCPUProfile(ctx, s); err != nil {
					return err
				}
			}
		}
		h.printBreakdown(s.b)
		res.breakdowns = append(res.breakdowns, s.b)
	}
	return nil
}

// profiled wraps call in a window of p: its samples count.
func profiled(p *profiler, call func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := p.enable(); err != nil {
			return err
		}
		err := call(ctx)
		if perr := p.disable(); perr != nil && err == nil {
			err = perr
		}
		return err
	}
}

// runtimeFigures reads the go_* families of rmsd's /metrics into b.
func (d *daemon) runtimeFigures(ctx context.Context, b *breakdown) error {
	body, err := d.metricsGet(ctx, "/metrics")
	if err != nil {
		return err
	}
	defer body.Close()
	values := map[string]int64{}
	sc := bufio.NewScanner(body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if v, err := strconv.ParseFloat(f[1], 64); err == nil {
			values[f[0]] = int64(v)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read rmsd's metrics: %w", err)
	}
	for _, f := range runtimeFigures {
		v, ok := values[f.name]
		if !ok {
			return fmt.Errorf("rmsd's metrics lack %s", f.name)
		}
		*f.to(b) = v
	}
	return nil
}

// metricsGet fetches path from rmsd's metrics listener.
func (d *daemon) metricsGet(ctx context.Context, path string) (io.ReadCloser, error) {
	return d.metricsGetWithin(ctx, path, time.Minute)
}

// metricsGetWithin fetches path from rmsd's metrics listener, the whole
// body read within timeout.
func (d *daemon) metricsGetWithin(ctx context.Context, path string, timeout time.Duration) (io.ReadCloser, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+d.metricsAddr+path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("rmsd's metrics listener: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("rmsd's metrics listener: GET %s: %s", path, resp.Status)
	}
	return cancelOnClose{resp.Body, cancel}, nil
}

// cancelOnClose ends a request's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close()
}

// saveProfiles saves rmsd's heap profile and goroutine counts into
// o.heapDir and prints the heap profile's top entries (in use). The heap
// profile is taken after a forced collection (the resident set and the
// runtime figures were taken before it), so that it shows what stays live
// between reads, not a read's objects in flight at the last collection.
func (h *harness) saveProfiles(ctx context.Context, d *daemon, side string) error {
	if err := os.MkdirAll(h.o.heapDir, 0o755); err != nil {
		return fmt.Errorf("-heap-profile: %w", err)
	}
	heap := filepath.Join(h.o.heapDir, side+".heap.pb.gz")
	for _, p := range []struct{ path, file string }{
		{"/debug/pprof/heap?gc=1", heap}, // live objects only: a collection first
		{"/debug/pprof/goroutine?debug=1", filepath.Join(h.o.heapDir, side+".goroutine.txt")},
	} {
		if err := d.saveTo(ctx, p.path, p.file); err != nil {
			return err
		}
	}
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=25",
		"-sample_index=inuse_space", h.rmsd, heap).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go tool pprof -top %s: %w: %s", heap, err, top)
	}
	fmt.Fprintf(h.log, "%s's heap in use (%s; goroutines in %s):\n%s", side, heap,
		filepath.Join(h.o.heapDir, side+".goroutine.txt"), top)
	return nil
}

// saveTo writes what path of rmsd's metrics listener serves to file.
func (d *daemon) saveTo(ctx context.Context, path, file string) error {
	body, err := d.metricsGet(ctx, path)
	if err != nil {
		return err
	}
	return writeFile(file, body)
}

// printBreakdown writes one side's resident set and, for an rmsd, its
// runtime figures.
func (h *harness) printBreakdown(b breakdown) {
	per := func(v int64) string { return kib(v / int64(b.bmcs)) }
	fmt.Fprintf(h.log, "memory %s, %d BMCs: RSS %s after start (anon %s, file %s), %s with every connection pooled (anon %s, file %s; the median round's, rounds %s–%s): %s per BMC, %s per BMC over the start; load %s\n",
		b.side, b.bmcs, mib(b.idle.Total), mib(b.idle.Anon), mib(b.idle.File), mib(b.warm.Total), mib(b.warm.Anon), mib(b.warm.File),
		mib(b.warmLo), mib(b.warmHi), per(b.warm.Total), per(b.warm.Total-b.idle.Total), b.load)
	if b.sys == 0 {
		return
	}
	fmt.Fprintf(h.log, "memory %s runtime: heap in use %s (live and uncollected objects %s, next GC at %s), released to the OS %s, goroutine stacks %s (%d goroutines, %s per BMC), all the runtime holds %s\n",
		b.side, mib(b.heapInuse), mib(b.heapAlloc), mib(b.nextGC), mib(b.heapReleased), mib(b.stacks), b.goroutines,
		fmt.Sprintf("%.2f", float64(b.goroutines)/float64(b.bmcs)), mib(b.sys))
}

// saveMappings copies /proc/<pid>/smaps, the resident set of each of the
// process's mappings, to file: which part of the binary (text, read-only
// data, data) and which anonymous regions the pages are in.
func saveMappings(pid int, file string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("-heap-profile: %w", err)
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return fmt.Errorf("-heap-profile: %w", err)
	}
	return writeFile(file, f) // closes f
}
