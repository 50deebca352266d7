package nodeops

import (
	"context"
	"sync"
)

// gates hands out one mutual-exclusion gate per address. A gate exists only
// while someone holds or waits for it, so thousands of one-off BMCs leave
// nothing behind.
type gates struct {
	mu   sync.Mutex
	held map[string]*gate
}

type gate struct {
	token chan struct{} // capacity 1: holding the token is holding the gate
	refs  int
}

// acquire waits for the gate of key, or for ctx to end.
func (g *gates) acquire(ctx context.Context, key string) (release func(), err error) {
	g.mu.Lock()
	gt := g.held[key]
	if gt == nil {
		gt = &gate{token: make(chan struct{}, 1)}
		g.held[key] = gt
	}
	gt.refs++
	g.mu.Unlock()

	select {
	case gt.token <- struct{}{}:
		return func() {
			<-gt.token
			g.drop(key, gt)
		}, nil
	case <-ctx.Done():
		g.drop(key, gt)
		return nil, ctx.Err()
	}
}

func (g *gates) drop(key string, gt *gate) {
	g.mu.Lock()
	gt.refs--
	if gt.refs == 0 {
		delete(g.held, key)
	}
	g.mu.Unlock()
}

// size reports how many gates exist (for tests).
func (g *gates) size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held)
}
