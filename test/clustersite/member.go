package clustersite

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/rmspb"
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
	addrs   chan [2]string
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
	addrs := make(chan [2]string, 1)
	m.mu.Lock()
	m.cmd, m.exited, m.err, m.addrs, m.serving, m.grains = cmd, exited, nil, addrs, map[string]bool{}, map[string]int{}
	m.mu.Unlock()
	read := make(chan struct{})
	go func() {
		defer close(read)
		m.follow(out, logFile, addrs)
	}()
	go func() {
		<-read
		err := cmd.Wait()
		logFile.Close()
		m.mu.Lock()
		m.err = err
		m.mu.Unlock()
		close(exited)
	}()
	var a [2]string
	select {
	case a = <-addrs:
	case <-exited:
		return fmt.Errorf("%s exited before serving (%v); its log: %s", m.ID, m.exitErr(), m.logPath)
	case <-time.After(wait):
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

// follow appends the member's log lines to logFile, reports its gRPC and
// admin addresses once both are logged, and tracks its racks' services
// and grains.
func (m *Member) follow(out io.Reader, logFile *os.File, addrs chan<- [2]string) {
	var a [2]string
	sent := false
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		_, _ = logFile.Write(append(line, '\n'))
		var l struct {
			Message string `json:"message"`
			Addr    string `json:"addr"`
			Rack    string `json:"rack_id"`
		}
		if json.Unmarshal(line, &l) != nil {
			continue
		}
		switch l.Message {
		case "rmsd serving":
			a[0] = l.Addr
		case "admin service serving: it can kill job engine actors":
			a[1] = l.Addr
		case "rack serving on this member":
			m.mu.Lock()
			m.serving[l.Rack] = true
			m.mu.Unlock()
		case "rack's service stopped on this member":
			m.mu.Lock()
			m.serving[l.Rack] = false
			m.mu.Unlock()
		case "rack grain activated on this member":
			m.mu.Lock()
			m.grains[l.Rack]++
			m.mu.Unlock()
		case "rack grain stopped on this member":
			m.mu.Lock()
			m.grains[l.Rack]--
			m.mu.Unlock()
		}
		if !sent && a[0] != "" && a[1] != "" {
			addrs <- a
			sent = true
		}
	}
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
