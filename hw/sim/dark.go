package sim

import (
	"net"
	"strconv"
	"sync"
)

// A tray without power does not refuse connections: nothing is there to
// send a reset. On loopback the simulator cannot drop packets, so a dark
// tray keeps its address bound by a silent listener that takes every
// connection and never says a word on it: a client's TLS handshake (and so
// its request) gets no answer until its own deadline, as with a BMC whose
// power is gone. A refused connection, by contrast, is what a powered BMC
// whose web server is down (booting, restarting, Unreachable) looks like.

// silence is the silent listener of a dark tray.
type silence struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  bool
}

// silenceLocked binds the device's address silently while it has no power.
// It does nothing when the device is listening or already silent. Caller
// holds d.mu.
func (d *Device) silenceLocked() {
	if d.up || d.quiet != nil || d.closing {
		return
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(d.ip, strconv.Itoa(d.port)))
	if err != nil {
		// The address is taken: clients see whatever holds it. Logged, as
		// the simulation no longer models a dark tray faithfully.
		d.log.Error().Err(err).Msg("dark tray could not keep its address silent")
		return
	}
	s := &silence{ln: ln}
	d.quiet = s
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		s.hold()
	}()
}

// unsilenceLocked closes the silent listener and every connection it
// holds: the address refuses again until the device listens. Caller holds
// d.mu.
func (d *Device) unsilenceLocked() {
	if d.quiet == nil {
		return
	}
	d.quiet.close()
	d.quiet = nil
}

// hold accepts connections and keeps them, unread, until close.
func (s *silence) hold() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns = append(s.conns, c)
		s.mu.Unlock()
	}
}

// close stops accepting and drops every held connection.
func (s *silence) close() {
	_ = s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.done = true
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.conns = nil
}
