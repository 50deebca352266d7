package clustersite

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// A partitionable site (Options.Partitionable) routes every member's
// traffic to the others through proxies the site controls: each member's
// actor remote listens on 127.0.0.1 and advertises an address of its own
// on another loopback address (127.0.0.<20+i>, the same port), where a
// proxy forwards to it; each member's automanaged seeds name, for every
// other member, a proxy of that pair. Partition cuts the traffic between
// two sets of members (open connections closed, new ones refused) while
// every member keeps its store connections; Heal lets it through again.
//
// A remote proxy serves every member that dials the member behind it, so
// it tells the dialing member by the process owning the connection's
// other end (Linux: /proc/net/tcp and each member's open sockets).

// advertisedHost is member i's advertised remote host.
func advertisedHost(i int) string { return "127.0.0." + strconv.Itoa(20+i) }

// startPartition starts the proxies of a partitionable site: member i's
// remote at its advertised address, and the seed proxies at
// seedPorts[i][j] (member i's way to member j's health checks).
func (s *Site) startPartition(seedPorts [][]int) error {
	n := s.o.Members
	p := &partition{side: make([]int, n), conns: map[*proxyConn]bool{}, refused: map[[2]int]int{}}
	s.part = p
	for j := range n {
		remote := strconv.Itoa(s.ports[j])
		if err := p.listen(advertisedHost(j)+":"+remote, "127.0.0.1:"+remote, j, true, s.dialingMember); err != nil {
			return err
		}
		for i := range n {
			if i == j {
				continue
			}
			from := i
			if err := p.listen("127.0.0.1:"+strconv.Itoa(seedPorts[i][j]), "127.0.0.1:"+strconv.Itoa(s.ports[n+j]), j, false,
				func(net.Conn) int { return from }); err != nil {
				return err
			}
		}
	}
	return nil
}

// partition is the site's proxies and which side each member is on.
type partition struct {
	mu    sync.Mutex
	side  []int // by member; all 0 when whole
	conns map[*proxyConn]bool
	// refused counts the remote connections refused, by dialing and
	// dialed member.
	refused map[[2]int]int
	lns     []net.Listener
	wg      sync.WaitGroup
}

// proxyConn is one forwarded connection from member from (-1: not a
// member) to member to.
type proxyConn struct {
	from, to   int
	client, up net.Conn
}

// cut reports whether traffic from member a to member b is cut.
func (p *partition) cut(a, b int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return a >= 0 && b >= 0 && p.side[a] != p.side[b]
}

// Partition cuts every member of sideA off from every other member: the
// connections between the two sides are closed and new ones refused,
// both the actor remotes' and the automanaged health checks'. The store
// stays reachable to all.
func (s *Site) Partition(sideA ...int) error {
	p := s.part
	if p == nil {
		return errors.New("clustersite: the site was not started partitionable")
	}
	p.mu.Lock()
	for i := range p.side {
		p.side[i] = 0
	}
	for _, i := range sideA {
		p.side[i] = 1
	}
	var drop []*proxyConn
	for c := range p.conns {
		if c.from >= 0 && p.side[c.from] != p.side[c.to] {
			drop = append(drop, c)
		}
	}
	p.mu.Unlock()
	for _, c := range drop {
		c.close()
	}
	return nil
}

// Refused returns how many connections from member from's process to
// member to's actor remote the partition has refused.
func (s *Site) Refused(from, to int) int {
	if s.part == nil {
		return 0
	}
	s.part.mu.Lock()
	defer s.part.mu.Unlock()
	return s.part.refused[[2]int{from, to}]
}

// Heal lets all traffic between members through again.
func (s *Site) Heal() {
	if s.part == nil {
		return
	}
	s.part.mu.Lock()
	defer s.part.mu.Unlock()
	for i := range s.part.side {
		s.part.side[i] = 0
	}
}

func (c *proxyConn) close() {
	_ = c.client.Close()
	_ = c.up.Close()
}

// listen starts a proxy on addr to target; from tells the dialing member
// of an accepted connection (-1 when unknown); remote says the proxy is
// a member's actor remote's (its refusals are counted).
func (p *partition) listen(addr, target string, to int, remote bool, from func(net.Conn) int) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("clustersite: proxy on %s: %w", addr, err)
	}
	p.lns = append(p.lns, ln)
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f := from(c)
			if p.cut(f, to) {
				_ = c.Close()
				if remote {
					p.mu.Lock()
					p.refused[[2]int{f, to}]++
					p.mu.Unlock()
				}
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			pc := &proxyConn{from: f, to: to, client: c, up: up}
			p.mu.Lock()
			p.conns[pc] = true
			p.mu.Unlock()
			p.wg.Go(func() { p.pipe(pc) })
		}
	})
	return nil
}

// pipe copies both ways until either side closes.
func (p *partition) pipe(pc *proxyConn) {
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(pc.up, pc.client); done <- struct{}{} }()
	go func() { _, _ = io.Copy(pc.client, pc.up); done <- struct{}{} }()
	<-done
	pc.close()
	<-done
	p.mu.Lock()
	delete(p.conns, pc)
	p.mu.Unlock()
}

// close stops the proxies and their connections.
func (p *partition) close() {
	if p == nil {
		return
	}
	for _, ln := range p.lns {
		_ = ln.Close()
	}
	p.mu.Lock()
	var all []*proxyConn
	for c := range p.conns {
		all = append(all, c)
	}
	p.mu.Unlock()
	for _, c := range all {
		c.close()
	}
	p.wg.Wait()
}

// dialingMember returns the index of the member whose process owns the
// other end of c, a connection accepted from loopback, or -1.
func (s *Site) dialingMember(c net.Conn) int {
	client, ok1 := c.RemoteAddr().(*net.TCPAddr)
	server, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return -1
	}
	inode := socketInode(client, server)
	if inode == "" {
		return -1
	}
	want := "socket:[" + inode + "]"
	for i, m := range s.Members {
		pid := m.pid()
		if pid == 0 {
			continue
		}
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && l == want {
				return i
			}
		}
	}
	return -1
}

// socketInode finds in /proc/net/tcp the socket whose local end is local
// and remote end remote, and returns its inode ("" if none).
func socketInode(local, remote *net.TCPAddr) string {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return ""
	}
	defer f.Close()
	l, r := procAddr(local), procAddr(remote)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 9 && fields[1] == l && fields[2] == r {
			return fields[9]
		}
	}
	return ""
}

// procAddr writes an IPv4 address as /proc/net/tcp does: the address as
// a little-endian word, the port big-endian, in hex.
func procAddr(a *net.TCPAddr) string {
	ip := a.IP.To4()
	if ip == nil {
		return ""
	}
	return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], a.Port)
}
