package simssh

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// serveOne starts an SSH server on a loopback socket that serves each
// session with session, and returns a client logged in to it.
func serveOne(t *testing.T, session func(ch ssh.Channel) Session) *ssh.Client {
	t.Helper()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{NoClientAuth: true}
	cfg.AddHostKey(signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		ServeConn(c, cfg, &wg, nil, func(_ *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request) {
			session(ch).Serve(ch, reqs)
		})
	})
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait() // ServeConn returns once the client below closes
	})
	client, err := ssh.Dial("tcp", ln.Addr().String(), &ssh.ClientConfig{User: "u", HostKeyCallback: ssh.FixedHostKey(signer.PublicKey())})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// TestSessionExecShellAndRefusals: exec runs the command and returns its
// exit status; accepted request types are answered yes; a type the
// session does not offer, and an sftp it refuses, are answered no.
func TestSessionExecShellAndRefusals(t *testing.T) {
	var sftpOK atomic.Bool
	client := serveOne(t, func(ch ssh.Channel) Session {
		return Session{
			Accept: []string{"pty-req"},
			Exec: func(cmd string) func() int {
				return func() int {
					_, _ = ch.Write([]byte("ran " + cmd))
					return 3
				}
			},
			SFTP: func() (sftp.Handlers, bool) { return sftp.InMemHandler(), sftpOK.Load() },
		}
	})

	s, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RequestPty("xterm", 24, 80, ssh.TerminalModes{}); err != nil {
		t.Errorf("an accepted pty-req was refused: %v", err)
	}
	out, err := s.Output("flint query")
	var exit *ssh.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 3 || string(out) != "ran flint query" {
		t.Errorf("exec = %q, %v; want its output and exit status 3", out, err)
	}

	s, err = client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Shell(); err == nil {
		t.Error("a shell the session does not offer was accepted")
	}
	if err := s.RequestSubsystem("sftp"); err == nil {
		t.Error("a refused sftp subsystem was accepted")
	}

	sftpOK.Store(true)
	c, err := sftp.NewClient(client)
	if err != nil {
		t.Fatalf("sftp offered: %v", err)
	}
	defer c.Close()
	if _, err := c.Getwd(); err != nil {
		t.Errorf("sftp Getwd: %v", err)
	}
}

// TestSessionExecRefusedEndsTheSession: an Exec that returns nil ends the
// session without an exit status.
func TestSessionExecRefusedEndsTheSession(t *testing.T) {
	client := serveOne(t, func(ch ssh.Channel) Session {
		return Session{Exec: func(string) func() int { return nil }}
	})
	s, err := client.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run("reboot"); err == nil {
		t.Fatal("a refused exec succeeded")
	}
}
