package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// saveCPUProfile profiles rmsd (-cpu-profile dir) while it serves nothing
// but one-rack reads, back to back, for -cpu-seconds, saves the
// profile as <dir>/<side>.cpu.pb.gz and prints its top entries and the
// number of reads profiled: the profile of exactly the one-rack call. The
// heap profile's allocation counts are saved before and after, and the
// top allocation sites of those reads printed.
func (h *harness) saveCPUProfile(ctx context.Context, s *memorySide) error {
	if err := os.MkdirAll(h.o.cpuDir, 0o755); err != nil {
		return fmt.Errorf("-cpu-profile: %w", err)
	}
	file := filepath.Join(h.o.cpuDir, s.name+".cpu.pb.gz")
	allocs0 := filepath.Join(h.o.cpuDir, s.name+".allocs-before.pb.gz")
	allocs1 := filepath.Join(h.o.cpuDir, s.name+".allocs-after.pb.gz")
	if err := s.d.saveTo(ctx, "/debug/pprof/allocs", allocs0); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reads := make(chan int, 1)
	failed := make(chan error, 1)
	go func() {
		n := 0
		for ctx.Err() == nil {
			if err := s.rack(ctx); err != nil {
				if ctx.Err() == nil {
					failed <- err
				}
				break
			}
			n++
		}
		reads <- n
	}()
	secs := h.o.cpuSecs
	body, err := s.d.metricsGetWithin(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs),
		time.Duration(secs)*time.Second+time.Minute)
	if err != nil {
		return err
	}
	err = writeFile(file, body)
	cancel()
	n := <-reads
	if err != nil {
		return err
	}
	select {
	case err := <-failed:
		return fmt.Errorf("one-rack read while profiling: %w", err)
	default:
	}
	ctx = context.WithoutCancel(ctx)
	if err := s.d.saveTo(ctx, "/debug/pprof/allocs", allocs1); err != nil {
		return err
	}
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=40", h.rmsd, file).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go tool pprof -top %s: %w: %s", file, err, top)
	}
	fmt.Fprintf(h.log, "%s's CPU over %d one-rack reads in %d s (%s; `go tool pprof -top %s`):\n%s",
		s.name, n, secs, file, file, top)
	// The allocations of those reads alone: the heap profile's allocation
	// counts after them less those before.
	top, err = exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=40", "-sample_index=alloc_space",
		"-diff_base", allocs0, h.rmsd, allocs1).CombinedOutput()
	if err != nil {
		return fmt.Errorf("go tool pprof -top %s: %w: %s", allocs1, err, top)
	}
	fmt.Fprintf(h.log, "%s's allocations over those reads (`go tool pprof -top -sample_index=alloc_space -diff_base %s %s`):\n%s",
		s.name, allocs0, allocs1, top)
	return nil
}

// writeFile copies body into file and closes body.
func writeFile(file string, body io.ReadCloser) error {
	defer body.Close()
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, body); err != nil {
		f.Close()
		return fmt.Errorf("save %s: %w", file, err)
	}
	return f.Close()
}
