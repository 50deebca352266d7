package nvossim

import (
	"errors"
	"io"
	"net"
	"strings"

	"github.com/rmsd/rmsd/hw/sim/simssh"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Permission extension keys set at SSH login.
const (
	extUser    = "nvossim-user"
	extExpired = "nvossim-expired"
)

func (s *Switch) sshConfig() *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(meta ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			res := authFailed
			switch {
			case s.onie:
				res = s.checkONIELoginLocked(meta.User(), string(pw))
			case !s.rejectLogins:
				res = s.checkPasswordLocked(meta.User(), string(pw))
			}
			if res == authFailed {
				s.log.Debug().Str("user", meta.User()).Msg("ssh login rejected")
				return nil, errors.New("nvossim: invalid credentials")
			}
			perm := &ssh.Permissions{Extensions: map[string]string{extUser: meta.User()}}
			if res == authExpired {
				perm.Extensions[extExpired] = "1"
			}
			return perm, nil
		},
		ServerVersion: "SSH-2.0-OpenSSH_9.2p1 NVOS-sim",
	}
	cfg.AddHostKey(s.hostSg)
	return cfg
}

// serveSSH accepts SSH connections until the listener closes.
func (s *Switch) serveSSH(ln net.Listener) {
	cfg := s.sshConfig()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		if s.isDown() || !s.track(c) {
			_ = c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(c)
			s.serveSSHConn(c, cfg)
		}()
	}
}

// track registers a live connection so Close can drop it; it refuses once
// the switch is closed.
func (s *Switch) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.sshConns[c] = struct{}{}
	return true
}

func (s *Switch) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.sshConns, c)
	s.mu.Unlock()
	_ = c.Close()
}

func (s *Switch) serveSSHConn(c net.Conn, cfg *ssh.ServerConfig) {
	simssh.ServeConn(c, cfg, &s.wg, s.isDown, func(conn *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request) {
		sess := sessionInfo{
			user:    conn.Permissions.Extensions[extUser],
			expired: conn.Permissions.Extensions[extExpired] == "1",
			drop:    func() { _ = conn.Close() },
		}
		s.session(ch, sess).Serve(ch, reqs)
	})
}

type sessionInfo struct {
	user    string
	expired bool
	drop    func() // closes the whole SSH connection
}

// session is what the switch offers on one session channel: exec, an
// interactive shell and the sftp subsystem, as NVOS (or ONIE, or a login
// whose password expired) answers them.
func (s *Switch) session(ch ssh.Channel, sess sessionInfo) simssh.Session {
	return simssh.Session{
		Accept: []string{"pty-req", "env", "window-change"},
		Exec: func(cmd string) func() int {
			if s.isDown() {
				sess.drop() // rebooting: the connection goes away
				return nil
			}
			return func() int {
				code := 1
				switch {
				case s.InONIE():
					code = s.runONIE(cmd, ch, ch, ch.Stderr())
				case sess.expired:
					_, _ = io.WriteString(ch.Stderr(), "You are required to change your password immediately (administrator enforced).\n")
				default:
					code = s.runCommand(cmd, ch, ch.Stderr())
				}
				s.log.Debug().Str("user", sess.user).Str("cmd", cmd).Int("exit", code).Msg("ssh exec")
				return code
			}
		},
		Shell: func() int {
			if sess.expired {
				return s.forcePasswordChange(ch, sess.user)
			}
			return s.interactiveShell(ch)
		},
		SFTP: func() (sftp.Handlers, bool) {
			if sess.expired || s.InONIE() { // ONIE has no SFTP server
				return sftp.Handlers{}, false
			}
			return s.sftpHandlers(), true
		},
	}
}

// readLine reads one line typed on a PTY (terminated by CR or LF).
func readLine(r io.Reader) (string, error) {
	var sb strings.Builder
	var b [1]byte
	for {
		if _, err := r.Read(b[:]); err != nil {
			return sb.String(), err
		}
		if b[0] == '\r' || b[0] == '\n' {
			return sb.String(), nil
		}
		if sb.Len() > 4096 {
			return "", errors.New("line too long")
		}
		sb.WriteByte(b[0])
	}
}

// forcePasswordChange runs the expired-password dialogue of an NVOS login
// shell and returns the exit status.
func (s *Switch) forcePasswordChange(ch ssh.Channel, name string) int {
	_, _ = io.WriteString(ch, "WARNING: Your password has expired.\r\nYou must change your password now and login again!\r\nNew password: ")
	first, err := readLine(ch)
	if err != nil {
		return 1
	}
	_, _ = io.WriteString(ch, "\r\nRetype new password: ")
	second, err := readLine(ch)
	if err != nil {
		return 1
	}
	switch {
	case first != second:
		_, _ = io.WriteString(ch, "\r\nSorry, passwords do not match.\r\npasswd: Authentication token manipulation error\r\npasswd: password unchanged\r\n")
		return 10
	case len(first) < 8:
		_, _ = io.WriteString(ch, "\r\nBAD PASSWORD: The password is shorter than 8 characters\r\npasswd: password unchanged\r\n")
		return 10
	}
	s.mu.Lock()
	u, ok := s.users[name]
	same := ok && u.password == first
	if ok && !same {
		u.password, u.expired = first, false
	}
	s.mu.Unlock()
	if !ok || same {
		_, _ = io.WriteString(ch, "\r\nBAD PASSWORD: The password is the same as the old one\r\npasswd: password unchanged\r\n")
		return 10
	}
	s.log.Info().Str("user", name).Msg("expired password changed over ssh")
	_, _ = io.WriteString(ch, "\r\npasswd: password updated successfully\r\n")
	return 0
}

// interactiveShell is a minimal line-oriented NVOS shell running the same
// commands as exec, until "exit" or end of input.
func (s *Switch) interactiveShell(ch ssh.Channel) int {
	for {
		_, _ = io.WriteString(ch, "admin@nvos:~$ ")
		line, err := readLine(ch)
		if err != nil {
			return 0
		}
		line = strings.TrimSpace(line)
		if line == "exit" || line == "logout" {
			return 0
		}
		if line != "" {
			s.runCommand(line, ch, ch.Stderr())
		}
	}
}
