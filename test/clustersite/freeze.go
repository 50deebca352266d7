package clustersite

import (
	"context"
	"fmt"
	"syscall"
)

// Freeze stops member i's process with SIGSTOP, as a stall would (a VM
// paused, a process stopped): it neither answers nor acts until Thaw.
func (s *Site) Freeze(i int) error { return s.Members[i].signal(syscall.SIGSTOP) }

// Thaw lets member i's process go on after Freeze (SIGCONT).
func (s *Site) Thaw(i int) error { return s.Members[i].signal(syscall.SIGCONT) }

func (m *Member) signal(sig syscall.Signal) error {
	m.mu.Lock()
	cmd := m.cmd
	m.mu.Unlock()
	if err := cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to %s: %w", sig, m.ID, err)
	}
	return nil
}

// Exited is closed when the member's current process has ended.
func (m *Member) Exited() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.exited
}

// WaitExit waits, until ctx ends, for the member's current process to end
// by itself, closes its clients and returns how it ended: nil for status
// 0, the *exec.ExitError otherwise.
func (m *Member) WaitExit(ctx context.Context) error {
	select {
	case <-m.Exited():
	case <-ctx.Done():
		return fmt.Errorf("%s did not exit: %w", m.ID, ctx.Err())
	}
	m.down()
	return m.exitErr()
}

// ExitedByItself reports whether the member's process has ended without
// the site stopping or killing it (a member that fenced itself), and how.
func (m *Member) ExitedByItself() (bool, error) {
	select {
	case <-m.Exited():
	default:
		return false, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rms != nil, m.err
}

// pid is the member's current process id (0 once it has ended).
func (m *Member) pid() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd == nil || m.cmd.Process == nil {
		return 0
	}
	select {
	case <-m.exited:
		return 0
	default:
		return m.cmd.Process.Pid
	}
}
