package nodeops

import (
	"context"
	"sync"
)

// gates hands out one mutual-exclusion gate per address. A gate exists only
// while someone holds or waits for it, so thousands of one-off BMCs leave
// nothing behind; a gate nobody needs any more is kept in spare for the
// next address, as every node operation takes one.
type gates struct {
	mu    sync.Mutex
	held  map[string]*gate
	spare sync.Pool // of *gate, each with refs 0 and its token free
}

type gate struct {
	token chan struct{} // capacity 1: holding the token is holding the gate
	refs  int
}

// acquire waits for the gate of key, or for ctx to end. The caller
// releases the gate it got with release(key, gate).
func (g *gates) acquire(ctx context.Context, key string) (*gate, error) {
	g.mu.Lock()
	gt := g.held[key]
	if gt == nil {
		gt, _ = g.spare.Get().(*gate)
		if gt == nil {
			gt = &gate{token: make(chan struct{}, 1)}
		}
		g.held[key] = gt
	}
	gt.refs++
	g.mu.Unlock()

	select {
	case gt.token <- struct{}{}:
		return gt, nil
	case <-ctx.Done():
		g.drop(key, gt)
		return nil, ctx.Err()
	}
}

// release gives back the gate of key that acquire returned.
func (g *gates) release(key string, gt *gate) {
	<-gt.token
	g.drop(key, gt)
}

func (g *gates) drop(key string, gt *gate) {
	g.mu.Lock()
	gt.refs--
	last := gt.refs == 0
	if last {
		delete(g.held, key)
	}
	g.mu.Unlock()
	if last { // out of the map and its token free: nobody can reach it
		g.spare.Put(gt)
	}
}

// size reports how many gates exist (for tests).
func (g *gates) size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.held)
}
