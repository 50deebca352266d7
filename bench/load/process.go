package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// process is a server the harness started: its stdout and stderr go to a
// log file, and it dies with the harness.
type process struct {
	name    string
	cmd     *exec.Cmd
	exited  chan error
	logPath string
}

// startTimeout bounds a start, from exec until health answers SERVING.
const startTimeout = 2 * time.Minute

// startProcess runs bin with args and feeds each line it prints on stdout
// to ready until ready returns true (its addresses are known). It returns
// once that happened, or fails if the process exits first or takes longer
// than startTimeout.
func startProcess(ctx context.Context, name, logPath string, ready func(line []byte) bool, bin string, args ...string) (*process, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &process{name: name, exited: make(chan error, 1), logPath: logPath}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stderr = logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	up := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		follow(out, logFile, ready, up)
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
		return nil, fmt.Errorf("%s exited before serving (%v); its log: %s", name, err, logPath)
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	case <-time.After(startTimeout):
		p.kill()
		return nil, fmt.Errorf("%s did not start serving within %v; its log: %s", name, startTimeout, logPath)
	}
}

// follow copies out to log line by line, passing each line to ready until
// it returns true, and then closes up.
func follow(out io.Reader, log io.Writer, ready func([]byte) bool, up chan<- struct{}) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	seen := false
	for sc.Scan() {
		line := sc.Bytes()
		_, _ = log.Write(append(line, '\n'))
		if !seen && ready(line) {
			seen = true
			close(up)
		}
	}
	_, _ = io.Copy(log, out) // a line longer than the buffer: keep draining
}

// pid is the process id whose CPU time the harness reads.
func (p *process) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM and waits up to a minute for the process to exit.
func (p *process) stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	select {
	case err := <-p.exited:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("%s exited with %d; its log: %s", p.name, exit.ExitCode(), p.logPath)
		}
		return err
	case <-time.After(time.Minute):
		p.kill()
		return fmt.Errorf("%s did not stop within a minute of SIGTERM; its log: %s", p.name, p.logPath)
	}
}

func (p *process) kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// connect makes a plaintext client of addr.
func connect(addr string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return conn, nil
}

// dial connects to addr and waits until its health service answers
// SERVING for the whole server.
func dial(ctx context.Context, addr string) (*grpc.ClientConn, error) {
	conn, err := connect(addr)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	h := healthpb.NewHealthClient(conn)
	for {
		resp, err := h.Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			conn.Close()
			return nil, fmt.Errorf("health of %s: not SERVING (%v)", addr, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
