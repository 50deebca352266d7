package httpsync

import (
	"sync"
	"time"
)

// idlePool keeps idle connections by host, most recently used first out,
// and closes those idle for longer than the timeout: a timer runs while
// any connection is idle, so an unused pool holds no goroutine or timer.
type idlePool struct {
	perHost, max int
	timeout      time.Duration

	mu     sync.Mutex
	byHost map[string][]*conn // oldest first
	n      int
	timer  *time.Timer // armed while n > 0
}

func (p *idlePool) init(perHost, maxIdle int, timeout time.Duration) {
	p.perHost, p.max, p.timeout = perHost, maxIdle, timeout
	p.byHost = map[string][]*conn{}
}

// take returns the most recently idle connection to addr that has not
// outlived the timeout (those that have are closed), or nil; reused is
// true when a connection was taken.
func (p *idlePool) take(addr string) (c *conn, reused bool) {
	now := time.Now()
	var stale []*conn
	defer func() {
		for _, s := range stale {
			_ = s.nc.Close()
		}
	}()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		l := p.byHost[addr]
		if len(l) == 0 {
			return nil, false
		}
		c = l[len(l)-1]
		l[len(l)-1] = nil
		if len(l) == 1 {
			delete(p.byHost, addr)
		} else {
			p.byHost[addr] = l[:len(l)-1]
		}
		p.n--
		if now.Sub(c.idleAt) < p.timeout {
			return c, true
		}
		stale = append(stale, c) // the timer has not come round to it yet
	}
}

// put keeps c idle, or closes it when its host or the pool is full.
func (p *idlePool) put(c *conn) {
	p.mu.Lock()
	l := p.byHost[c.addr]
	if len(l) >= p.perHost || p.n >= p.max {
		p.mu.Unlock()
		_ = c.nc.Close()
		return
	}
	c.idleAt = time.Now()
	p.byHost[c.addr] = append(l, c)
	p.n++
	if p.timer == nil {
		p.timer = time.AfterFunc(p.timeout, p.expire)
	}
	p.mu.Unlock()
}

// expire closes the connections idle for longer than the timeout and
// sets the timer for the next one to expire, if any is left.
func (p *idlePool) expire() {
	now := time.Now()
	var stale []*conn
	p.mu.Lock()
	var next time.Time
	for addr, l := range p.byHost {
		keep := l[:0]
		for _, c := range l {
			if now.Sub(c.idleAt) >= p.timeout {
				stale = append(stale, c)
				continue
			}
			keep = append(keep, c)
			if next.IsZero() || c.idleAt.Before(next) {
				next = c.idleAt
			}
		}
		clear(l[len(keep):])
		if len(keep) == 0 {
			delete(p.byHost, addr)
		} else {
			p.byHost[addr] = keep
		}
	}
	p.n -= len(stale)
	p.timer = nil
	if p.n > 0 {
		p.timer = time.AfterFunc(next.Add(p.timeout).Sub(now), p.expire)
	}
	p.mu.Unlock()
	for _, c := range stale {
		_ = c.nc.Close()
	}
}

// closeAll closes every idle connection and stops the timer.
func (p *idlePool) closeAll() {
	p.mu.Lock()
	all := p.byHost
	p.byHost = map[string][]*conn{}
	p.n = 0
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.mu.Unlock()
	for _, l := range all {
		for _, c := range l {
			_ = c.nc.Close()
		}
	}
}

func (p *idlePool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}
