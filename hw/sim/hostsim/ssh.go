package hostsim

import (
	"bufio"
	"errors"
	"net"

	"github.com/rmsd/rmsd/hw/sim/simssh"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

func (h *Host) sshConfig() *ssh.ServerConfig {
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(meta ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			c := h.cfg.Credentials
			if meta.User() != c.Username || string(pw) != c.Password.Reveal() {
				return nil, errors.New("hostsim: invalid credentials")
			}
			return &ssh.Permissions{}, nil
		},
		ServerVersion: "SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13",
	}
	cfg.AddHostKey(h.signer)
	return cfg
}

// up reports whether the host answers: its tray's system power is on.
func (h *Host) up() bool { return h.cfg.SystemOn == nil || h.cfg.SystemOn() }

func (h *Host) serve(ln net.Listener) {
	cfg := h.sshConfig()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		h.mu.Lock()
		closed := h.closed
		if !closed {
			h.conns[c] = struct{}{}
		}
		h.mu.Unlock()
		if closed || !h.up() { // a host that is off does not answer
			_ = c.Close()
			h.untrack(c)
			continue
		}
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			defer h.untrack(c)
			h.serveConn(c, cfg)
		}()
	}
}

func (h *Host) untrack(c net.Conn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
	_ = c.Close()
}

func (h *Host) serveConn(c net.Conn, cfg *ssh.ServerConfig) {
	simssh.ServeConn(c, cfg, &h.wg, nil, func(_ *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request) {
		h.session(ch).Serve(ch, reqs)
	})
}

// session is what the host offers on one session channel: exec of its
// commands and the sftp subsystem.
func (h *Host) session(ch ssh.Channel) simssh.Session {
	return simssh.Session{
		Accept: []string{"pty-req", "env"},
		Exec: func(cmd string) func() int {
			return func() int {
				code := h.run(cmd, bufio.NewReader(ch), ch, ch.Stderr())
				h.log.Debug().Str("cmd", cmd).Int("exit", code).Msg("host ssh exec")
				return code
			}
		},
		SFTP: func() (sftp.Handlers, bool) { return h.sftpHandlers(), true },
	}
}
