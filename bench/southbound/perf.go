package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
)

// profiler is a `perf record` attached to one process, recording only
// between enable and disable (the admission windows), so its profile holds
// nothing but what the process did in them.
type profiler struct {
	cmd      *exec.Cmd
	ctl, ack *os.File // our ends of perf's control and acknowledgement pipes
	acks     *bufio.Reader
	out      string
}

// startProfiler attaches perf to pid, recording call graphs into out,
// disabled until enable.
func startProfiler(ctx context.Context, pid int, out string) (*profiler, error) {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, err
	}
	// The child's descriptors 3 and 4 are ExtraFiles[0] and [1].
	cmd := exec.CommandContext(ctx, "perf", "record", "-q", "-g", "-F", "997", "--delay=-1",
		"--control", "fd:3,4", "-p", strconv.Itoa(pid), "-o", out)
	cmd.ExtraFiles = []*os.File{ctlR, ackW}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	logf, err := os.Create(out + ".log")
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		ackR.Close()
		ackW.Close()
		return nil, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Start()
	ctlR.Close()
	ackW.Close()
	if err != nil {
		ctlW.Close()
		ackR.Close()
		return nil, fmt.Errorf("perf record: %w", err)
	}
	return &profiler{cmd: cmd, ctl: ctlW, ack: ackR, acks: bufio.NewReader(ackR), out: out}, nil
}

// enable starts recording and returns once perf says it has.
func (p *profiler) enable() error { return p.command("enable") }

// disable stops recording and returns once perf says it has.
func (p *profiler) disable() error { return p.command("disable") }

func (p *profiler) command(c string) error {
	if _, err := fmt.Fprintln(p.ctl, c); err != nil {
		return fmt.Errorf("perf %s: %w", c, err)
	}
	// perf acknowledges with "ack\n" and a NUL, which the next read
	// meets first.
	line, err := p.acks.ReadString('\n')
	if err != nil {
		return fmt.Errorf("perf %s: no acknowledgement: %w", c, err)
	}
	if strings.Trim(line, "\x00\n ") != "ack" {
		return fmt.Errorf("perf %s: acknowledged %q", c, line)
	}
	return nil
}

// stop ends the recording (perf's own stop command, then the end of its
// control stream) and waits until perf has written its file.
func (p *profiler) stop() error {
	_, err := fmt.Fprintln(p.ctl, "stop")
	p.ctl.Close()
	if werr := p.cmd.Wait(); err == nil {
		err = werr
	}
	p.ack.Close()
	if err != nil {
		return fmt.Errorf("perf record into %s (its messages in %s.log): %w", p.out, p.out, err)
	}
	return nil
}
