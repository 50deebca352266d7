package hostsim

import (
	"bufio"
	"errors"
	"net"
	"time"

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
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	conn, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	defer conn.Close()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		ssh.DiscardRequests(reqs)
	}()
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session channels are supported")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			continue
		}
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			defer ch.Close()
			h.serveSession(ch, chReqs)
		}()
	}
}

// serveSession handles exec and the sftp subsystem of one session.
func (h *Host) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	for req := range reqs {
		switch req.Type {
		case "pty-req", "env":
			_ = req.Reply(true, nil)
		case "exec":
			cmd := simssh.PayloadString(req.Payload)
			_ = req.Reply(true, nil)
			code := h.run(cmd, bufio.NewReader(ch), ch, ch.Stderr())
			h.log.Debug().Str("cmd", cmd).Int("exit", code).Msg("host ssh exec")
			simssh.SendExitStatus(ch, code)
			return
		case "subsystem":
			if simssh.PayloadString(req.Payload) != "sftp" {
				_ = req.Reply(false, nil)
				continue
			}
			_ = req.Reply(true, nil)
			srv := sftp.NewRequestServer(ch, h.sftpHandlers())
			_ = srv.Serve()
			_ = srv.Close()
			return
		default:
			if req.WantReply {
				_ = req.Reply(false, nil)
			}
		}
	}
}
