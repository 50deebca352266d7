package storetest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// CutProxy forwards loopback TCP connections to a server (PostgreSQL) so
// that a test can cut them all off, as a failed network would, and later
// let new ones through again. The server itself keeps running.
type CutProxy struct {
	lis    net.Listener
	target string
	cut    atomic.Bool
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewCutProxy starts a proxy to target (host:port); it stops when t ends.
func NewCutProxy(t testing.TB, target string) *CutProxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &CutProxy{lis: lis, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		_ = lis.Close()
		p.closeAll()
		p.wg.Wait()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *CutProxy) Addr() string { return p.lis.Addr().String() }

// Cut closes every connection carried and refuses new ones until Restore.
func (p *CutProxy) Cut() {
	p.cut.Store(true)
	p.closeAll()
}

// Restore lets new connections through again.
func (p *CutProxy) Restore() { p.cut.Store(false) }

func (p *CutProxy) accept() {
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		if p.cut.Load() {
			_ = c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(s, c) })
		p.wg.Go(func() { p.pipe(c, s) })
	}
}

func (p *CutProxy) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

func (p *CutProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}
