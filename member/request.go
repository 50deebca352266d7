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
// members or the grain cannot be reached, until ctx ends; each attempt
// waits at most until ctx's deadline (or a membership timeout without one).
// A grain that is handing its rack over answers at once (UNAVAILABLE,
// which the caller retries), and one that has stopped, or stops with the
// request still in its mailbox, answers it as a dead letter, which the
// cluster's request retries at the rack's next activation (handover.go,
// grainMailbox): no request waits for its deadline on a rack changing
// hands.
func requestRack[R any](ctx context.Context, m *Member, rackID string, msg any) (R, error) {
	var zero R
	pause := time.NewTicker(max(m.cfg.tick()/8, 10*time.Millisecond))
	defer pause.Stop()
	for {
		timeout := m.cfg.MembershipTimeout
		if dl, ok := ctx.Deadline(); ok {
			timeout = time.Until(dl)
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
