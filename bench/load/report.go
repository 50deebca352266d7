package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/rmsd/rmsd/bench/procstat"
)

// machine describes where the figures were taken.
type machine struct {
	cpu                   string // model name
	cores                 int
	kernel, goVersion     string
	loadBefore, loadAfter string // /proc/loadavg's 1, 5 and 15 minute averages
}

// thisMachine reads the machine's description; a part it cannot read is
// "unknown".
func thisMachine() machine {
	m := machine{cpu: "unknown", cores: runtime.NumCPU(), kernel: "unknown", goVersion: runtime.Version(), loadBefore: loadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.kernel = strings.TrimSpace(string(b))
	}
	return m
}

// loadAverage is /proc/loadavg's first three fields.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// reportData is everything report.md shows.
type reportData struct {
	date        time.Time
	machine     machine
	o           options
	version     string // rmsd's GetVersion
	commit      string // the rmsd module's git revision, "" when unknown
	sums        []summary
	ratios      []ratio
	idleRMSDCPU float64 // rmsd's CPU seconds per second while only the bare server was loaded
	charts      []string
}

// renderReport writes report.md.
func renderReport(w io.Writer, r reportData) error {
	var b bytes.Buffer
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# Load harness report\n\n")
	rev := ""
	if r.commit != "" {
		rev = " (commit " + r.commit + ")"
	}
	p("rmsd %s%s against a bare grpc-go server answering the same messages from memory, %s.\n",
		r.version, rev, r.date.UTC().Format("2006-01-02 15:04 MST"))
	p("Rerun with `task bench:load` (or `cd bench && go run ./load -h` for the flags).\n\n")
	p("Machine: %s, %d cores, Linux %s, %s; load average %s before the run and %s after it. ",
		r.machine.cpu, r.machine.cores, r.machine.kernel, r.machine.goVersion, r.machine.loadBefore, r.machine.loadAfter)
	p("Settings: %d rounds, reads %v per run (after a %v warm-up), %d concurrent ghz workers on one connection, %d admissions per run.\n\n",
		r.o.rounds, r.o.duration, r.o.warmup, r.o.concurrency, r.o.admissions)
	for _, c := range r.charts {
		p("![%s](%s)\n", strings.TrimSuffix(c, ".png"), c)
	}
	p("\n## Ratios, rmsd / bare\n\n")
	p("| RPC | throughput (rounds) | p50 latency | p99 latency | CPU per call |\n")
	p("| --- | --- | --- | --- | --- |\n")
	for _, x := range r.ratios {
		p("| %s | %s (%s–%s) | %s | %s | %s (%s vs %s) |\n", x.rpc, times(x.rps), times(x.rpsMin), times(x.rpsMax),
			times(x.p50), times(x.p99), times(x.cpu), duration(x.rmsdCPU), duration(x.bareCPU))
	}
	p("\n## Figures per server\n\n")
	p("| RPC | server | calls | errors | calls/s | p50 | p99 | CPU per call |\n")
	p("| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, s := range r.sums {
		p("| %s | %s | %d | %d | %.0f | %s | %s | %s%s |\n", s.rpc, s.server, s.count, s.errors, s.rps,
			duration(s.p50), duration(s.p99), duration(s.cpuPerCall), coarse(s.cpu))
	}
	p("\nCPU times are counted in ticks of %s; a figure marked coarse rests on fewer than %d of them.\n",
		duration(time.Second/procstat.ClockTicks), coarseTicks)
	for _, s := range r.sums {
		if s.admitted >= 0 {
			p("\nrmsd admitted %d of %d %s calls (an admission it refused in band would be missing from its apply history); the longest wait for a run's jobs to end after its last answer was %s. ",
				s.admitted, s.count, s.rpc, duration(s.settle))
			if s.count > 0 {
				p("Its CPU per call is %s until the last call was answered (the figure compared above) and %s with the jobs it started, until they ended.\n",
					duration(s.cpuPerCall), duration(s.cpu/time.Duration(s.count)))
			}
		}
	}
	p("While only the bare server was loaded, idle rmsd (its simulator included) used %.1f ms of CPU per second.\n", r.idleRMSDCPU*1000)
	p("\n## Method\n\n")
	p(`The harness (bench/load) builds rmsd and starts it as ` + "`rmsd --simulate`" + ` in a temporary directory
on free ports, adds the simulated firmware release and applies it to the simulated rack, so every
node runs it. It records one reply of each measured RPC from the daemon, and starts the bare server
(bench/bare) on those replies as a process of its own: a grpc-go server with the generated
RackManager service that decodes each request and answers the recorded reply, so its replies have
the daemon's types and sizes and its cost is gRPC's alone. ghz v0.120.0, as a library in the
harness's process, then calls both servers in alternation, every RPC in every round, the server
that goes first alternating between rounds:

- GetJobStatus of that apply's parent job;
- GetVersion;
- BatchGetPowerState of the simulated rack's 35 nodes (each read is a Redfish call to a simulated BMC);
- ApplyStoredFirmwareObject of the release to those 35 nodes: an admission that answers with a
  parent and 35 child job ids at once. Each call names a rack id of its own for the same 35 nodes,
  so admissions never refuse each other on the job engine's node exclusion, and since the nodes
  already run the release, every child reads its node's firmware inventory through the simulator,
  finds every target up to date and completes without flashing. A run is a fixed number of calls;
  on rmsd it ends when the daemon holds no node any more, so the next run starts on an idle daemon
  and the CPU time of the 36 jobs each admission starts counts in its CPU per call.

Reads run for a fixed time. Latencies are pooled over the rounds (p50 and p99 are nearest-rank);
calls per second are all calls over all the runs' time. CPU per call is the server process's user
plus system time (/proc/<pid>/stat) over its runs, divided by its calls: steadier than calls per
second on a small shared machine, since it does not count the time the server waits for a core.
rmsd's CPU includes its in-process simulator, which answers the BMC and switch calls of
BatchGetPowerState and of the admitted jobs, and its idle background (the line above). The client
shares the machine with both servers.
`)
	_, err := w.Write(b.Bytes())
	return err
}

// coarseTicks is the fewest CPU ticks a CPU figure rests on before the
// report calls it coarse.
const coarseTicks = 10

// coarse marks a CPU figure computed from fewer than coarseTicks ticks.
func coarse(total time.Duration) string {
	if total < coarseTicks*time.Second/procstat.ClockTicks {
		return fmt.Sprintf(" (coarse: %d ticks)", total/(time.Second/procstat.ClockTicks))
	}
	return ""
}

// times formats a ratio, "n/a" when it could not be computed.
func times(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v >= 100:
		return fmt.Sprintf("%.0f×", v)
	case v >= 10:
		return fmt.Sprintf("%.1f×", v)
	}
	return fmt.Sprintf("%.2f×", v)
}

// duration formats a latency or CPU time in the unit that suits it.
func duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}
