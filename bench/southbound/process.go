package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// process is a program the harness started: its stdout lines go to a log
// file and, when kept, to lines; it dies with the harness.
type process struct {
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	lines   chan string
	exited  chan error
	logPath string
	started time.Time
}

// startTimeout bounds a start until the ready line.
const startTimeout = 3 * time.Minute

// start runs bin and returns once a stdout line satisfies ready. With keep,
// every later stdout line is kept for readLine (the bare client's answers).
func start(ctx context.Context, name, logPath string, env []string, keep bool, ready func(string) bool, bin string, args ...string) (*process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, lines: make(chan string, 64), exited: make(chan error, 1), logPath: logPath}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	up := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		seen := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = io.WriteString(logFile, line+"\n")
			switch {
			case !seen && ready(line):
				seen = true
				close(up)
			case seen && keep:
				p.lines <- line
			}
		}
		_, _ = io.Copy(logFile, out)
	}()
	go func() {
		<-copied
		p.exited <- p.cmd.Wait()
		logFile.Close()
	}()
	select {
	case <-up:
		return p, nil
	case err := <-p.exited:
		return nil, fmt.Errorf("%s exited before it was ready (%v); its log: %s", name, err, logPath)
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	case <-time.After(startTimeout):
		p.kill()
		return nil, fmt.Errorf("%s not ready within %v; its log: %s", name, startTimeout, logPath)
	}
}

// pid is the process whose CPU time and memory the harness reads.
func (p *process) pid() int { return p.cmd.Process.Pid }

// command writes one line to the process's stdin and returns its next
// stdout line.
func (p *process) command(ctx context.Context, line string) (string, error) {
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		return "", fmt.Errorf("%s: send %q: %w", p.name, line, err)
	}
	select {
	case l, ok := <-p.lines:
		if !ok {
			return "", fmt.Errorf("%s exited; its log: %s", p.name, p.logPath)
		}
		return strings.TrimSpace(l), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// stop sends SIGTERM and waits up to a minute.
func (p *process) stop() error {
	_ = p.stdin.Close() // the bare client ends at the end of its input
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	select {
	case err := <-p.exited:
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			return fmt.Errorf("%s exited with %d; its log: %s", p.name, exit.ExitCode(), p.logPath)
		}
		return nil
	case <-time.After(time.Minute):
		p.kill()
		return fmt.Errorf("%s did not stop within a minute of SIGTERM; its log: %s", p.name, p.logPath)
	}
}

func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}
