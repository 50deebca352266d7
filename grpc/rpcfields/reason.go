package rpcfields

import (
	"context"
	"sync"
)

// Reason is where an inner interceptor leaves the reason of an RPC's
// in-band failure for an outer one: the reasons interceptor works it out
// from what the handler recorded, the audit interceptor records it.
type Reason struct {
	mu   sync.Mutex
	text string
}

type reasonKey struct{}

// WithReason returns ctx carrying a new, empty Reason.
func WithReason(ctx context.Context) (context.Context, *Reason) {
	r := &Reason{}
	return context.WithValue(ctx, reasonKey{}, r), r
}

// SetReason leaves text in the Reason ctx carries, if any.
func SetReason(ctx context.Context, text string) {
	if r, ok := ctx.Value(reasonKey{}).(*Reason); ok {
		r.mu.Lock()
		r.text = text
		r.mu.Unlock()
	}
}

// Text is the reason left, "" when none was.
func (r *Reason) Text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.text
}
