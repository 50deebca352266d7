package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// profiler is a `perf record` attached to one process, its samples stamped
// with CLOCK_MONOTONIC, and the windows (the admissions) whose samples
// count: stop writes them next to the profile as the argument of
// `perf report --time`. (perf's own enable/disable control fails on a
// process that starts threads while it records: "Thread and evlist pollfd
// index mismatch", perf 6.1.)
type profiler struct {
	cmd     *exec.Cmd
	out     string
	windows []string
	from    string
}

// startProfiler attaches perf to pid, recording call graphs into out.
func startProfiler(ctx context.Context, pid int, out string) (*profiler, error) {
	logf, err := os.Create(out + ".log")
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.CommandContext(ctx, "perf", "record", "-g", "-F", "997", "-k", "CLOCK_MONOTONIC",
		"-p", strconv.Itoa(pid), "-o", out)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf record: %w", err)
	}
	return &profiler{cmd: cmd, out: out}, nil
}

// monotonic is CLOCK_MONOTONIC as perf prints it (seconds.nanoseconds).
func monotonic() (string, error) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return "", fmt.Errorf("clock_gettime: %w", err)
	}
	return fmt.Sprintf("%d.%09d", ts.Sec, ts.Nsec), nil
}

// enable opens a window.
func (p *profiler) enable() (err error) {
	p.from, err = monotonic()
	return err
}

// disable closes the window enable opened.
func (p *profiler) disable() error {
	to, err := monotonic()
	if err != nil {
		return err
	}
	p.windows = append(p.windows, p.from+","+to)
	return nil
}

// stop ends the recording, waits until perf has written its file, and
// writes the windows to <out>.time.
func (p *profiler) stop() error {
	err := p.cmd.Process.Signal(syscall.SIGINT)
	if werr := p.cmd.Wait(); err == nil && werr != nil {
		// perf ends by the SIGINT it was sent.
		if ee, ok := werr.(*exec.ExitError); !ok || ee.ExitCode() != -1 {
			err = werr
		}
	}
	if err == nil {
		err = os.WriteFile(p.out+".time", []byte(strings.Join(p.windows, " ")+"\n"), 0o644)
	}
	if err != nil {
		return fmt.Errorf("perf record into %s (its messages in %s.log): %w", p.out, p.out, err)
	}
	return nil
}
