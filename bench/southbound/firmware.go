package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rmsd/rmsd/bench/procstat"
	"github.com/rmsd/rmsd/grpc/rmspb"
)

// simFirmwareMagic starts a package whose version the simulator reads from
// its header (hw/sim.FirmwareMagic).
const simFirmwareMagic = "SIMFW "

// firmwareFile is the package's name in rmsd's firmware_dir.
const firmwareFile = "southbound-bmc.fwpkg"

// taskPollMS is how often both sides read a firmware task: rmsd's
// [redfish] task_poll_interval_seconds in the harness's configuration.
const taskPollMS = 1000

// rssSample is how often the resident set is sampled during an upload.
const rssSample = 20 * time.Millisecond

// firmwareRun is one side's firmware update of the rack's compute trays.
type firmwareRun struct {
	run
	trays     int
	bytes     int64 // pushed in all
	rssBefore int64
	rssPeak   int64
}

// throughput is bytes pushed per second over the run.
func (f firmwareRun) throughput() float64 {
	if f.wall <= 0 {
		return 0
	}
	return float64(f.bytes) / f.wall.Seconds()
}

// growth is the resident set's growth during the run.
func (f firmwareRun) growth() int64 { return f.rssPeak - f.rssBefore }

// firmwareScenario pushes one package to every compute tray of the first
// rack, through rmsd's BatchUpdateFirmware and through the bare client,
// in alternated rounds, sampling each side's resident set meanwhile.
func (h *harness) firmwareScenario(ctx context.Context, res *results) error {
	pkg := filepath.Join(h.dir, "firmware", firmwareFile)
	size := int64(h.o.firmwareMiB) << 20
	if err := writePackage(pkg, size); err != nil {
		return err
	}
	rack := h.site(1)
	trays := &rmspb.NodeSet{}
	for _, n := range rack[0].GetNodes() {
		if strings.HasPrefix(n.GetType().String(), "COMPUTE_") {
			trays.Nodes = append(trays.Nodes, n)
		}
	}
	if len(trays.GetNodes()) == 0 {
		return fmt.Errorf("firmware: rack 1 has no compute trays")
	}
	d, err := startDaemon(ctx, h.rmsd, h.dir, rack, defaultBMCRequests)
	if err != nil {
		return err
	}
	defer d.close()
	if err := os.MkdirAll(filepath.Join(d.dir, "firmware"), 0o755); err != nil {
		return fmt.Errorf("firmware: rmsd's firmware_dir: %w", err)
	}
	if err := os.Link(pkg, filepath.Join(d.dir, "firmware", firmwareFile)); err != nil {
		return fmt.Errorf("firmware: put the package in rmsd's firmware_dir: %w", err)
	}
	b, err := h.bare(ctx, 1)
	if err != nil {
		return err
	}
	defer b.Stop()
	rackID := rack[0].GetNodes()[0].GetRackId()
	sides := []struct {
		name   string
		pid    int
		update func(context.Context) error
	}{
		{"rmsd", d.PID(), func(ctx context.Context) error { return d.updateFirmware(ctx, trays) }},
		{"bare", b.PID(), func(ctx context.Context) error { return b.updateFirmware(ctx, rackID, pkg, len(trays.GetNodes())) }},
	}
	for round := range h.o.rounds {
		for i := range sides {
			s := sides[(i+round)%len(sides)]
			f := firmwareRun{trays: len(trays.GetNodes()), bytes: size * int64(len(trays.GetNodes()))}
			if f.rssBefore, err = procstat.RSS(s.pid); err != nil {
				return err
			}
			stop := sampleRSS(s.pid)
			f.run, err = timed(ctx, "firmware", s.name, round, 1, s.pid, h.sims, s.update)
			f.rssPeak = max(stop(), f.rssBefore)
			if err != nil {
				return err
			}
			fmt.Fprintf(h.log, "firmware round %d %-4s: %d trays × %s in %s (%.1f MiB/s), CPU %s, simulators %.2f cores, RSS %s before, +%s at most; load %s\n",
				round, s.name, f.trays, mib(size), ms(f.wall), f.throughput()/(1<<20), ms(f.cpu), f.simCores(),
				mib(f.rssBefore), mib(f.growth()), f.load)
			res.firmware = append(res.firmware, f)
		}
	}
	return nil
}

// writePackage writes a simulator firmware package of size bytes, a
// megabyte at a time.
func writePackage(path string, size int64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("firmware package: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("firmware package: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	// The header names the version, as hw/sim.FirmwarePackage writes it
	// (that package is not imported: it would bring the whole simulator
	// into the bench module).
	head := simFirmwareMagic + "southbound-1\n"
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = 'a' + byte(i%26)
	}
	n, err := w.WriteString(head[:min(int64(len(head)), size)])
	if err != nil {
		f.Close()
		return fmt.Errorf("firmware package: %w", err)
	}
	for written := int64(n); written < size; {
		n, err := w.Write(chunk[:min(size-written, int64(len(chunk)))])
		if err != nil {
			f.Close()
			return fmt.Errorf("firmware package: %w", err)
		}
		written += int64(n)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("firmware package: %w", err)
	}
	return f.Close()
}

// sampleRSS samples the resident set of pid until the returned function
// is called, which returns the largest sample.
func sampleRSS(pid int) func() int64 {
	var peak int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(rssSample)
		defer t.Stop()
		for {
			if r, err := procstat.RSS(pid); err == nil {
				peak = max(peak, r)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() int64 {
		close(done)
		wg.Wait()
		return peak
	}
}

// updateFirmware has rmsd push the package to trays with one
// BatchUpdateFirmware (force_update, no activation) and waits until the
// parent job ends; every child must complete.
func (d *daemon) updateFirmware(ctx context.Context, trays *rmspb.NodeSet) error {
	t := trays.GetNodes()[0].GetType()
	resp, err := d.rms.BatchUpdateFirmware(ctx, &rmspb.BatchUpdateFirmwareRequest{
		Nodes: trays, ForceUpdate: true,
		FirmwareTargets: map[int32]*rmspb.FirmwareTargetList{int32(t): {Targets: []*rmspb.FirmwareTarget{{Target: "BMC", Filename: firmwareFile}}}},
	})
	if err != nil {
		return fmt.Errorf("BatchUpdateFirmware: %w", err)
	}
	if got := len(resp.GetJobs()); got != len(trays.GetNodes()) || resp.GetResponse().GetJobId() == "" {
		return fmt.Errorf("BatchUpdateFirmware: %d of %d trays started: %s", got, len(trays.GetNodes()), resp.GetResponse().GetMessage())
	}
	return d.waitJob(ctx, resp.GetResponse().GetJobId())
}

// jobPoll is how often the harness reads a firmware job's state.
const jobPoll = 50 * time.Millisecond

// waitJob reads job until it ends; it must complete.
func (d *daemon) waitJob(ctx context.Context, id string) error {
	for {
		st, err := d.rms.GetFirmwareJobStatus(ctx, &rmspb.GetFirmwareJobStatusRequest{JobId: id})
		if err != nil {
			return fmt.Errorf("GetFirmwareJobStatus: %w", err)
		}
		switch st.GetJobState() {
		case rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_COMPLETED:
			return nil
		case rmspb.FirmwareJobState_FIRMWARE_JOB_STATE_FAILED:
			return fmt.Errorf("firmware job %s failed: %s %s", id, st.GetStateDescription(), st.GetErrorMessage())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(jobPoll):
		}
	}
}

// updateFirmware has the bare client push pkg to every compute tray of
// rack and checks every tray's task completed.
func (b *bare) updateFirmware(ctx context.Context, rack, pkg string, want int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	line, err := b.Command(ctx, fmt.Sprintf("firmware %s %s %d", rack, pkg, taskPollMS))
	if err != nil {
		return err
	}
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "done" {
		return fmt.Errorf("bare client: %s", line)
	}
	if ok, _ := strconv.Atoi(f[2]); ok != want {
		return fmt.Errorf("bare client: %d of %d trays updated (%s)", ok, want, line)
	}
	return nil
}
