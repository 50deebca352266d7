package simssh

import (
	"net"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// handshakeTimeout bounds a client's SSH handshake.
const handshakeTimeout = 30 * time.Second

// ServeConn runs the server side of the SSH connection c: the handshake
// (within handshakeTimeout), global requests refused, and each session
// channel handed to serve in a goroutine counted in wg; other channel types
// are rejected. It returns when the client closes the connection or, with
// down set, when a channel opens while down reports true (a rebooting
// device drops its sessions). The caller closes c.
func ServeConn(c net.Conn, cfg *ssh.ServerConfig, wg *sync.WaitGroup, down func() bool,
	serve func(conn *ssh.ServerConn, ch ssh.Channel, reqs <-chan *ssh.Request)) {
	_ = c.SetDeadline(time.Now().Add(handshakeTimeout))
	conn, chans, reqs, err := ssh.NewServerConn(c, cfg)
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	defer conn.Close()
	wg.Go(func() { ssh.DiscardRequests(reqs) })
	for nc := range chans {
		if down != nil && down() {
			return
		}
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session channels are supported")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Go(func() {
			defer ch.Close()
			serve(conn, ch, chReqs)
		})
	}
}
