package httpsync

import (
	"net"
	"testing"
	"time"
)

// pipeConn is an idle connection whose closing the test can see.
func pipeConn(t *testing.T, addr string) (*conn, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return &conn{nc: a, addr: addr}, b
}

func closedPeer(t *testing.T, peer net.Conn) bool {
	t.Helper()
	_ = peer.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := peer.Read(make([]byte, 1))
	return err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// newPool is an idle pool with an hour's timeout, emptied at the end of
// the test.
func newPool(t *testing.T, perHost, maxIdle int) *idlePool {
	t.Helper()
	p := &idlePool{}
	p.init(perHost, maxIdle, time.Hour)
	t.Cleanup(p.closeAll)
	return p
}

// backdate makes cs look idle for two hours, past newPool's timeout.
func backdate(p *idlePool, cs ...*conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.idleAt = c.idleAt.Add(-2 * time.Hour)
	}
}

func TestExpireClosesOnlyWhatIdledPastTheTimeout(t *testing.T) {
	p := newPool(t, 2, 100)
	old, oldPeer := pipeConn(t, "a:443")
	fresh, _ := pipeConn(t, "b:443")
	p.put(old)
	p.put(fresh)
	backdate(p, old)

	p.expire()
	if n := p.count(); n != 1 {
		t.Fatalf("%d idle after expiry, want 1", n)
	}
	if c, _ := p.take("b:443"); c != fresh {
		t.Errorf("the fresh connection was not kept")
	}
	if c, _ := p.take("a:443"); c != nil {
		t.Errorf("the expired connection is still handed out")
	}
	if !closedPeer(t, oldPeer) {
		t.Errorf("the expired connection was not closed")
	}
	p.closeAll()
	p.mu.Lock()
	armed := p.timer != nil
	p.mu.Unlock()
	if armed {
		t.Errorf("the timer is still armed with nothing idle")
	}
}

func TestPutClosesPastTheCaps(t *testing.T) {
	p := newPool(t, 1, 2)
	first, _ := pipeConn(t, "a:443")
	second, secondPeer := pipeConn(t, "a:443")
	other, _ := pipeConn(t, "b:443")
	third, thirdPeer := pipeConn(t, "c:443")
	p.put(first)
	p.put(second) // a's share is one
	p.put(other)
	p.put(third) // the pool holds two
	if n := p.count(); n != 2 {
		t.Errorf("%d idle, want 2", n)
	}
	if !closedPeer(t, secondPeer) || !closedPeer(t, thirdPeer) {
		t.Errorf("connections past a cap were kept open")
	}
}

func TestTakeSkipsAConnectionThatOutlivedTheTimeout(t *testing.T) {
	p := newPool(t, 2, 100)
	old, oldPeer := pipeConn(t, "a:443")
	recent, _ := pipeConn(t, "a:443")
	p.put(old)
	p.put(recent)
	backdate(p, old, recent)
	if c, reused := p.take("a:443"); c != nil || reused {
		t.Fatalf("took a connection idle past the timeout")
	}
	if !closedPeer(t, oldPeer) {
		t.Errorf("the stale connection was not closed")
	}
	if n := p.count(); n != 0 {
		t.Errorf("%d idle, want 0", n)
	}
}
