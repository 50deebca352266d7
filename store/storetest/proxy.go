package storetest

import (
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
)

// CutProxy forwards loopback TCP connections to a server (PostgreSQL) so
// that a test can cut them all off, as a failed network would, or stall
// them (Stall: nothing forwarded, nothing closed, as a hung server or a
// black-holed route would), and later let new ones through again. The
// server itself keeps running.
type CutProxy struct {
	lis    net.Listener
	target string
	cut    atomic.Bool
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
	// stalled is closed while traffic flows; Stall replaces it with an
	// open channel that the pipes wait on, Restore closes it again.
	stalled chan struct{}
	done    chan struct{} // closed when the test ends
}

// NewCutProxy starts a proxy to target (host:port); it stops when t ends.
func NewCutProxy(t testing.TB, target string) *CutProxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	flowing := make(chan struct{})
	close(flowing)
	p := &CutProxy{lis: lis, target: target, conns: map[net.Conn]struct{}{}, stalled: flowing, done: make(chan struct{})}
	p.wg.Go(p.accept)
	t.Cleanup(func() {
		_ = lis.Close()
		close(p.done)
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

// Stall stops forwarding on every connection, carried or new, without
// closing any: a client's reads and connects hang until its own deadline.
func (p *CutProxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stalled:
		p.stalled = make(chan struct{})
	default: // already stalled
	}
}

// Restore lets new connections through again, and ends a stall.
func (p *CutProxy) Restore() {
	p.cut.Store(false)
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.stalled:
	default:
		close(p.stalled)
	}
}

// gate returns the channel a pipe waits on before forwarding: closed
// unless the proxy is stalled.
func (p *CutProxy) gate() chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stalled
}

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

// pipe copies src to dst, holding each chunk while the proxy is stalled
// (until a restore, or the connection is closed by a cut or the cleanup).
func (p *CutProxy) pipe(dst, src net.Conn) {
	defer func() {
		_ = dst.Close()
		_ = src.Close()
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.waitFlowing() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// waitFlowing waits while the proxy is stalled; false when the test ended
// meanwhile. A connection cut meanwhile fails on its next write.
func (p *CutProxy) waitFlowing() bool {
	select {
	case <-p.gate():
		return true
	case <-p.done:
		return false
	}
}

func (p *CutProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

// ProxyPostgres starts a CutProxy to the server of the PostgreSQL URL dsn
// (TempPostgresDatabase's) and returns it with dsn rewritten to reach the
// server through it.
func ProxyPostgres(t testing.TB, dsn string) (proxy *CutProxy, viaProxy string) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("postgres url: %v", err)
	}
	proxy = NewCutProxy(t, u.Host)
	via := *u
	via.Host = proxy.Addr()
	return proxy, via.String()
}
