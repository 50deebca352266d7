package launch

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

// DefaultStartTimeout bounds a start until the ready line when Spec leaves
// StartTimeout zero.
const DefaultStartTimeout = 3 * time.Minute

// stopTimeout bounds how long Stop waits after SIGTERM.
const stopTimeout = time.Minute

// Spec is how to start a program.
type Spec struct {
	// Name names the program in errors.
	Name string
	// LogPath receives its stdout and stderr.
	LogPath string
	// Env is added to the harness's own environment.
	Env []string
	// Ready is given each stdout line until it returns true: the program
	// is then ready (its addresses are known, say).
	Ready func(line string) bool
	// Commands opens a pipe to its stdin and keeps every stdout line after
	// the ready one for Command: the program answers commands line by line.
	Commands bool
	// StartTimeout bounds the wait for the ready line (DefaultStartTimeout
	// when zero).
	StartTimeout time.Duration
}

// Process is a program a harness started.
type Process struct {
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser // nil without Spec.Commands
	lines   chan string    // stdout lines after the ready one, with Spec.Commands
	exited  chan error
	logPath string
	started time.Time
}

// Start runs bin with args and returns once a stdout line satisfies
// s.Ready; it fails if the program exits first, takes longer than the
// start timeout, or ctx ends. The program gets SIGKILL should the harness
// die.
func Start(ctx context.Context, s Spec, bin string, args ...string) (*Process, error) {
	logFile, err := os.Create(s.LogPath)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	p := &Process{name: s.Name, lines: make(chan string, 64), exited: make(chan error, 1), logPath: s.LogPath}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), s.Env...)
	p.cmd.Stderr = logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	fail := func(err error) (*Process, error) {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", s.Name, err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return fail(err)
	}
	if s.Commands {
		if p.stdin, err = p.cmd.StdinPipe(); err != nil {
			return fail(err)
		}
	}
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		return fail(err)
	}
	up := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		defer close(p.lines)
		p.follow(out, logFile, s, up)
	}()
	go func() {
		<-copied
		p.exited <- p.cmd.Wait()
		logFile.Close()
	}()
	timeout := s.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-up:
		return p, nil
	case err := <-p.exited:
		return nil, fmt.Errorf("%s exited before it was ready (%v); its log: %s", s.Name, err, s.LogPath)
	case <-ctx.Done():
		p.Kill()
		return nil, ctx.Err()
	case <-timer.C:
		p.Kill()
		return nil, fmt.Errorf("%s not ready within %v; its log: %s", s.Name, timeout, s.LogPath)
	}
}

// follow copies out to log line by line, closes up at the ready line and,
// with s.Commands, keeps the later lines for Command.
func (p *Process) follow(out io.Reader, log io.Writer, s Spec, up chan<- struct{}) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	seen := false
	for sc.Scan() {
		line := sc.Text()
		_, _ = io.WriteString(log, line+"\n")
		switch {
		case !seen && s.Ready(line):
			seen = true
			close(up)
		case seen && s.Commands:
			p.lines <- line
		}
	}
	_, _ = io.Copy(log, out) // a line longer than the buffer: keep draining
}

// PID is the process id, whose CPU time and memory the harness reads.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Started is when the program was executed.
func (p *Process) Started() time.Time { return p.started }

// LogPath is where its output goes.
func (p *Process) LogPath() string { return p.logPath }

// Command writes one line to the program's stdin and returns its next
// stdout line, trimmed. The program must have been started with
// Spec.Commands.
func (p *Process) Command(ctx context.Context, line string) (string, error) {
	if p.stdin == nil {
		return "", fmt.Errorf("%s takes no commands", p.name)
	}
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

// Stop closes the program's stdin (a command reader ends at the end of
// its input), sends SIGTERM and waits up to a minute, then kills it. An
// exit code above zero is an error.
func (p *Process) Stop() error {
	if p.stdin != nil {
		_ = p.stdin.Close()
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case err := <-p.exited:
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			return fmt.Errorf("%s exited with %d; its log: %s", p.name, exit.ExitCode(), p.logPath)
		}
		return nil
	case <-timer.C:
		p.Kill()
		return fmt.Errorf("%s did not stop within %v of SIGTERM; its log: %s", p.name, stopTimeout, p.logPath)
	}
}

// Kill kills the program and waits for it to be gone.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}
