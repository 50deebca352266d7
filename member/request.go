package member

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/cluster"
)

// requestRack sends msg to the grain of rackID, on whichever member the
// cluster places it, and returns its answer of type R. It tries again,
// every eighth of a membership check, while the identity moves between
// members or the grain cannot be reached, until ctx ends. Each attempt
// waits at most until ctx's deadline (or a membership timeout without
// one), and at most attempt when attempt > 0: only for a read, which may be
// asked twice. A grain that stops while a request waits in its mailbox
// (a rack handed over) drops it unanswered, as protoactor drops a stopped
// actor's messages; a read bounded this way is asked again of the rack's
// next activation instead of waiting out the caller's deadline. A change
// is not repeated on a timeout: it may have been acted on.
func requestRack[R any](ctx context.Context, m *Member, rackID string, msg any, attempt time.Duration) (R, error) {
	var zero R
	pause := time.NewTicker(max(m.cfg.tick()/8, 10*time.Millisecond))
	defer pause.Stop()
	for {
		timeout := m.cfg.MembershipTimeout
		if dl, ok := ctx.Deadline(); ok {
			timeout = time.Until(dl)
		}
		if attempt > 0 {
			timeout = min(timeout, attempt)
		}
		if timeout <= 0 {
			return zero, fmt.Errorf("member: rack %s: %w", rackID, context.DeadlineExceeded)
		}
		res, err := m.c.Request(rackID, rackKind, msg, cluster.WithTimeout(timeout))
		if err == nil {
			if reply, ok := res.(R); ok {
				return reply, nil
			}
			err = fmt.Errorf("unexpected answer %T", res)
		}
		select {
		case <-ctx.Done():
			return zero, fmt.Errorf("member: rack %s not reached: %w (last: %v)", rackID, ctx.Err(), err)
		case <-pause.C:
		}
	}
}
