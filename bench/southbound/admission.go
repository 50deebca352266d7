package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/bench/procstat"
	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// admission is one admission round of one side: rmsd's BatchUpdateFirmware
// or the engine's own CreateBatch (bench/engineadmit).
type admission struct {
	side  string
	round int
	nodes int
	cpu   time.Duration // the process's CPU time over the admission
	wall  time.Duration
	load  string
	// afterAnswer is rmsd's CPU time from the reply until it fell quiet:
	// the released children's first steps, the jobs' work (not counted in
	// cpu).
	afterAnswer time.Duration
	// answered is rmsd's run time when the harness had the reply.
	answered time.Duration
	// parentID is rmsd's batch parent, cancelled after the round.
	parentID string
}

// perNode is the CPU time per admitted node.
func (a admission) perNode() time.Duration {
	if a.nodes == 0 {
		return 0
	}
	return a.cpu / time.Duration(a.nodes)
}

// admissionScenario admits a firmware update of o.admitNodes compute
// trays through rmsd's BatchUpdateFirmware (one call, one parent, one
// child per tray) and through the job engine alone (bench/engineadmit: the
// same batch, the same journal store), in alternated rounds after one
// warm-up round each, and takes each side's CPU time over the admission.
// With o.baseline, a second rmsd built from another tree takes its turn in
// every round too (side "baseline"), so that a change is measured against
// what it changes under the same load. With o.perfDir, each rmsd is
// profiled by perf over its measured admissions, and nothing else.
//
// Both sides are read to the nanosecond (procstat.RunTime). The children
// must not do their work while the admission is measured (it is the
// jobs', and the firmware scenario measures it): rmsd holds each child
// until the RPC has answered (grpc/rmsserver/afterAnswer), and its CPU
// time is read as soon as the harness has the reply; rmsd runs at a lower
// priority than the harness (lowerPriority), so that the harness reads it
// at once rather than after the released children's first steps (a
// progress record, the package opened, a connect). rmsd lets one BMC
// operation at a time through ([redfish] max_concurrent_requests = 1): the
// trays' BMC addresses lead to a listener that accepts nothing, so the
// first child waits at its connect and every other one before it starts
// its BMC client, after its progress record and the package's open. The
// race between the harness's reading and those first steps remains (on an
// idle core rmsd runs them at once, whatever its priority), which is why
// the summary also compares each side's least round. Between rounds, untimed, rmsd's batch is
// cancelled and rmsd left to settle, as the engine's children are
// released and waited for: neither side carries a thousand waiting
// children per earlier round into the next (their goroutines would weigh
// on every later collection).
func (h *harness) admissionScenario(ctx context.Context, res *results) error {
	trays, err := h.computeTrays()
	if err != nil {
		return err
	}
	silent, port, err := silentListener()
	if err != nil {
		return err
	}
	defer syscall.Close(silent)
	type side struct {
		name string
		d    *daemon
		prof *profiler
	}
	bins := []side{{name: "rmsd"}}
	if h.o.baseline != "" {
		bins = append(bins, side{name: "baseline"})
	}
	var sides []*side
	for _, b := range bins {
		bin := h.rmsd
		if b.name == "baseline" {
			bin = h.o.baseline
		}
		d, err := startDaemon(ctx, bin, h.dir, nil, 1)
		if err != nil {
			return err
		}
		defer d.close()
		if err := lowerPriority(d.PID()); err != nil {
			return err
		}
		if err := os.MkdirAll(d.dir+"/firmware", 0o755); err != nil {
			return fmt.Errorf("admission: rmsd's firmware_dir: %w", err)
		}
		if err := writePackage(d.dir+"/firmware/"+firmwareFile, 4096); err != nil {
			return err
		}
		s := &side{name: b.name, d: d}
		if h.o.perfDir != "" {
			if err := os.MkdirAll(h.o.perfDir, 0o755); err != nil {
				return fmt.Errorf("-perf: %w", err)
			}
			if s.prof, err = startProfiler(ctx, d.PID(), filepath.Join(h.o.perfDir, b.name+".perf.data")); err != nil {
				return err
			}
			defer func() {
				if err := s.prof.stop(); err != nil {
					fmt.Fprintf(h.log, "admission: %v\n", err)
				}
			}()
		}
		sides = append(sides, s)
	}
	sides = append(sides, &side{name: "engine"})
	engine, err := h.engineRounds(ctx, h.o.rounds+1)
	if err != nil {
		return err
	}
	for round := range h.o.rounds + 1 { // round 0 warms every side up
		for i := range sides {
			s := sides[(i+round)%len(sides)]
			if s.d == nil {
				if round > 0 {
					e := engine[round]
					e.round, e.load = round-1, loadAverage()
					h.printAdmission(e)
					res.admissions = append(res.admissions, e)
				}
				continue
			}
			profile := s.prof != nil && round > 0
			if profile {
				if err := s.prof.enable(); err != nil {
					return err
				}
			}
			a, err := s.d.admit(ctx, batchOf(trays, h.o.admitNodes, round, port))
			if profile {
				if perr := s.prof.disable(); perr != nil && err == nil {
					err = perr
				}
			}
			if err != nil {
				return err
			}
			quiet, err := quietRunTime(ctx, s.d.PID())
			if err != nil {
				return err
			}
			a.afterAnswer = quiet - a.answered
			if err := s.d.settle(ctx, a.parentID); err != nil {
				return err
			}
			a.side, a.round = s.name, round-1
			if round > 0 {
				h.printAdmission(a)
				res.admissions = append(res.admissions, a)
			}
		}
	}
	return nil
}

// engineRounds runs bench/engineadmit for rounds rounds of o.admitNodes
// children. It runs apart from rmsd (the engine alone has the machine for
// itself, as rmsd has during its rounds).
func (h *harness) engineRounds(ctx context.Context, rounds int) ([]admission, error) {
	dir, err := os.MkdirTemp(h.dir, "engineadmit-")
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, h.engineBin, "-nodes", strconv.Itoa(h.o.admitNodes), "-rounds", strconv.Itoa(rounds), "-dir", dir)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("engineadmit: %w: %s", err, errOut.String())
	}
	var runs []admission
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 5 || f[0] != "round" {
			continue
		}
		n, _ := strconv.Atoi(f[2])
		cpu, _ := strconv.ParseInt(f[3], 10, 64)
		wall, _ := strconv.ParseInt(f[4], 10, 64)
		runs = append(runs, admission{side: "engine", nodes: n, cpu: time.Duration(cpu), wall: time.Duration(wall)})
	}
	if len(runs) != rounds {
		return nil, fmt.Errorf("engineadmit: %d rounds in its output, want %d:\n%s", len(runs), rounds, out.String())
	}
	return runs, nil
}

func (h *harness) printAdmission(a admission) {
	after := ""
	if a.afterAnswer > 0 && a.nodes > 0 {
		after = fmt.Sprintf(", then %s per node after the answer", us(a.afterAnswer/time.Duration(a.nodes)))
	}
	fmt.Fprintf(h.log, "admit round %d %-8s: %d nodes in %s, CPU %s (%s per node%s); load %s\n",
		a.round, a.side, a.nodes, ms(a.wall), ms(a.cpu), us(a.perNode()), after, a.load)
}

// computeTrays is every compute tray of the site, rack by rack.
func (h *harness) computeTrays() ([]*rmspb.NodeInfo, error) {
	var out []*rmspb.NodeInfo
	for _, r := range h.sims.racks {
		for _, node := range r.GetNodes() {
			if strings.HasPrefix(node.GetType().String(), "COMPUTE_") {
				out = append(out, node)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("admission: no compute trays in %d simulated racks", len(h.sims.racks))
	}
	return out, nil
}

// batchOf is round's batch of n nodes made from trays, taken in turn (a
// site with fewer trays than n gives each several nodes): node ids of the
// round's own, each BMC at an address of its own on the silent listener's
// port, no other endpoint (the nodes of earlier rounds still hold
// theirs).
func batchOf(trays []*rmspb.NodeInfo, n, round, port int) *rmspb.NodeSet {
	set := &rmspb.NodeSet{}
	for i := range n {
		t := trays[i%len(trays)]
		node := proto.CloneOf(t)
		node.NodeId = fmt.Sprintf("%s-a%d-%d", t.GetNodeId(), round, i/len(trays))
		node.HostEndpoint, node.AdditionalHostEndpoints = nil, nil
		node.BmcEndpoint.Interface.IpAddress = fmt.Sprintf("127.%d.%d.%d", 230+round%20, 1+i>>8, i&255)
		node.BmcEndpoint.Port = uint32(port)
		set.Nodes = append(set.Nodes, node)
	}
	return set
}

// admit starts a firmware update of nodes with one BatchUpdateFirmware
// and takes rmsd's CPU time over the call; every node must be admitted.
func (d *daemon) admit(ctx context.Context, nodes *rmspb.NodeSet) (admission, error) {
	t := nodes.GetNodes()[0].GetType()
	req := &rmspb.BatchUpdateFirmwareRequest{
		Nodes: nodes, ForceUpdate: true,
		FirmwareTargets: map[int32]*rmspb.FirmwareTargetList{int32(t): {Targets: []*rmspb.FirmwareTarget{{Target: "BMC", Filename: firmwareFile}}}},
	}
	cpu0, err := procstat.RunTime(d.PID())
	if err != nil {
		return admission{}, err
	}
	start := time.Now()
	resp, err := d.rms.BatchUpdateFirmware(ctx, req)
	cpu1, cerr := procstat.RunTime(d.PID())
	wall := time.Since(start)
	if err != nil {
		return admission{}, fmt.Errorf("BatchUpdateFirmware of %d nodes: %w", len(nodes.GetNodes()), err)
	}
	if cerr != nil {
		return admission{}, cerr
	}
	if got := len(resp.GetJobs()); got != len(nodes.GetNodes()) {
		return admission{}, fmt.Errorf("BatchUpdateFirmware: %d of %d nodes admitted: %s", got, len(nodes.GetNodes()), resp.GetResponse().GetMessage())
	}
	return admission{side: "rmsd", nodes: len(nodes.GetNodes()), cpu: cpu1 - cpu0, wall: wall, load: loadAverage(),
		answered: cpu1, parentID: resp.GetResponse().GetJobId()}, nil
}

// quietRunTime waits until process pid has used under a millisecond of
// CPU in 200 ms (or for 30 s at most) and returns its run time then.
func quietRunTime(ctx context.Context, pid int) (time.Duration, error) {
	last, err := procstat.RunTime(pid)
	if err != nil {
		return 0, err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		now, err := procstat.RunTime(pid)
		if err != nil {
			return 0, err
		}
		if now-last < time.Millisecond {
			return now, nil
		}
		last = now
	}
	return last, nil
}

// settle cancels the batch parent (every child with it) and waits until
// the parent is terminal, with a generous deadline.
func (d *daemon) settle(ctx context.Context, parentID string) error {
	if _, err := d.admin.CancelJob(ctx, &adminpb.CancelJobRequest{JobId: parentID}); err != nil {
		return fmt.Errorf("cancel batch %s: %w", parentID, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, err := d.rms.GetFirmwareJobStatus(ctx, &rmspb.GetFirmwareJobStatusRequest{JobId: parentID})
		if err != nil {
			return fmt.Errorf("read batch %s: %w", parentID, err)
		}
		switch st.GetJobState() {
		case rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED, rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED:
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("batch %s still %s two minutes after its cancel", parentID, st.GetJobState())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// silentListener is a TCP socket listening on every address (so on all of
// 127.0.0.0/8) with the smallest backlog, which never accepts: once its
// queue is full, connects to it wait without an answer. It returns the
// socket and its port.
func silentListener() (int, int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, 0, fmt.Errorf("silent listener: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{}); err != nil {
		syscall.Close(fd)
		return 0, 0, fmt.Errorf("silent listener: bind: %w", err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		syscall.Close(fd)
		return 0, 0, fmt.Errorf("silent listener: listen: %w", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return 0, 0, fmt.Errorf("silent listener: %w", err)
	}
	in, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		syscall.Close(fd)
		return 0, 0, fmt.Errorf("silent listener: address %v", sa)
	}
	return fd, in.Port, nil
}
