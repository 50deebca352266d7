package clustersite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/test/proclog"
)

// Member is one rmsd process of the site. Its clients are replaced at each
// restart; read them through RMS and Admin.
type Member struct {
	ID      string
	index   int
	logPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error
	log     *proclog.Log // the current run's
	conns   []*grpc.ClientConn
	rms     rmspb.RackManagerClient
	admin   adminpb.AdminClient
	serving map[string]bool // racks whose service is open on this run, from the log
	grains  map[string]int  // rack grain activations less stops on this run, from the log
}

// RMS is the member's RackManager client (nil while it is down).
func (m *Member) RMS() rmspb.RackManagerClient {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rms
}

// Admin is the member's admin client (nil while it is down).
func (m *Member) Admin() adminpb.AdminClient {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.admin
}

// Up reports whether the member runs and serves.
func (m *Member) Up() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.rms == nil {
		return false
	}
	select {
	case <-m.exited:
		return false
	default:
		return true
	}
}

// Serving returns the racks whose service this member logged as open and
// not since stopped.
func (m *Member) Serving() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for r, ok := range m.serving {
		if ok {
			out = append(out, r)
		}
	}
	return out
}

// Grains returns, by rack, the grain activations less the stops this
// member logged on its current run: 1 for a rack whose grain lives here.
// It is empty while the member is down: its grains died with it.
func (m *Member) Grains() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for r, n := range m.grains {
		if n != 0 {
			out[r] = n
		}
	}
	return out
}

// Log returns what the member logged on all its runs.
func (m *Member) Log() string {
	b, err := os.ReadFile(m.logPath)
	if err != nil {
		return fmt.Sprintf("(log of %s: %v)", m.ID, err)
	}
	return string(b)
}

// LogPath is the file the member's log lines are appended to.
func (m *Member) LogPath() string { return m.logPath }

// start runs the member's process with cmdline and env, and waits until
// its gRPC and admin services listen.
func (m *Member) start(cmdline, env []string, wait time.Duration) error {
	logFile, err := os.OpenFile(m.logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(cmdline[0], cmdline[1:]...)
	cmd.Env = env
	out, err := cmd.StdoutPipe()
	if err != nil {
		logFile.Close()
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("start %s: %w", m.ID, err)
	}
	exited := make(chan struct{})
	log := proclog.New()
	m.mu.Lock()
	m.cmd, m.exited, m.err, m.log, m.serving, m.grains = cmd, exited, nil, log, map[string]bool{}, map[string]int{}
	m.mu.Unlock()
	go func() {
		_ = log.Follow(out, logFile, m.track) // ends when the process closes its output
		err := cmd.Wait()
		logFile.Close()
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		close(exited)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	a, err := log.Addrs(ctx, "rmsd serving", "admin service serving: it can kill job engine actors")
	switch {
	case errors.Is(err, proclog.ErrEnded):
		<-exited
		return fmt.Errorf("%s exited before serving (%v); its log: %s", m.ID, m.exitErr(), m.logPath)
	case err != nil:
		_ = cmd.Process.Kill()
		<-exited
		return fmt.Errorf("%s did not serve within %s; its log: %s", m.ID, wait, m.logPath)
	}
	var conns []*grpc.ClientConn
	for _, addr := range a {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			_ = cmd.Process.Kill()
			<-exited
			return err
		}
		conns = append(conns, conn)
	}
	m.mu.Lock()
	m.conns, m.rms, m.admin = conns, rmspb.NewRackManagerClient(conns[0]), adminpb.NewAdminClient(conns[1])
	m.mu.Unlock()
	return nil
}

// track follows the member's racks' services and grains in its log.
func (m *Member) track(l proclog.Line) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch l.Message {
	case "rack serving on this member":
		m.serving[l.RackID] = true
	case "rack's service stopped on this member":
		m.serving[l.RackID] = false
	case "rack grain activated on this member":
		m.grains[l.RackID]++
	case "rack grain stopped on this member":
		m.grains[l.RackID]--
	}
}

// Logged waits until the member's current run has logged message (the
// "message" field of a log line) at least once, or fails when ctx ends
// or the run ends first.
func (m *Member) Logged(ctx context.Context, message string) error {
	m.mu.Lock()
	log := m.log
	m.mu.Unlock()
	if log == nil {
		return fmt.Errorf("%s has not started", m.ID)
	}
	if err := log.Wait(ctx, message, 1); err != nil {
		return fmt.Errorf("%s: %w", m.ID, err)
	}
	return nil
}

func (m *Member) exitErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// down closes the clients and forgets the racks: the process has ended.
func (m *Member) down() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		_ = c.Close()
	}
	m.conns, m.rms, m.admin, m.serving, m.grains = nil, nil, nil, map[string]bool{}, map[string]int{}
}

// kill ends the process with SIGKILL, as a crash would.
func (m *Member) kill() error {
	m.mu.Lock()
	cmd, exited := m.cmd, m.exited
	m.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill %s: %w", m.ID, err)
	}
	<-exited
	m.down()
	return nil
}

// stop sends SIGTERM and waits up to wait for a clean exit (the member
// drains its racks first).
func (m *Member) stop(wait time.Duration) error {
	m.mu.Lock()
	cmd, exited := m.cmd, m.exited
	m.mu.Unlock()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return fmt.Errorf("stop %s: %w", m.ID, err)
	}
	select {
	case <-exited:
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		<-exited
		m.down()
		return fmt.Errorf("%s did not stop within %s of SIGTERM; its log: %s", m.ID, wait, m.logPath)
	}
	m.down()
	if err := m.exitErr(); err != nil {
		return fmt.Errorf("%s stopped with %v after SIGTERM; its log: %s", m.ID, err, m.logPath)
	}
	return nil
}
