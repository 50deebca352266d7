package member

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/cluster"

	"github.com/rmsd/rmsd/member/rackpb"
)

// Forward delivers fwd to the grain of fwd.RackId, on whichever member
// the cluster places it (activating it there), and returns its reply. It
// tries again while the identity moves between members (a request that
// reaches no activation), until ctx ends: the error is then ctx's, with
// the last failure. It is the cluster of grpc/forward's receiving side.
func (m *Member) Forward(ctx context.Context, fwd *rackpb.Forward) (*rackpb.ForwardReply, error) {
	if fwd.FromMember == "" {
		fwd.FromMember = m.cfg.MemberID
	}
	if dl, ok := ctx.Deadline(); ok && fwd.DeadlineUnixNano == 0 {
		fwd.DeadlineUnixNano = dl.UnixNano()
	}
	pause := time.NewTicker(max(m.cfg.tick()/8, 10*time.Millisecond))
	defer pause.Stop()
	for {
		timeout := m.cfg.MembershipTimeout
		if dl, ok := ctx.Deadline(); ok {
			timeout = time.Until(dl)
		}
		if timeout <= 0 {
			return nil, fmt.Errorf("member: rack %s: %w", fwd.RackId, context.DeadlineExceeded)
		}
		res, err := m.c.Request(fwd.RackId, rackKind, fwd, cluster.WithTimeout(timeout))
		if err == nil {
			if reply, ok := res.(*rackpb.ForwardReply); ok {
				return reply, nil
			}
			err = fmt.Errorf("unexpected answer %T", res)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("member: rack %s not reached: %w (last: %v)", fwd.RackId, ctx.Err(), err)
		case <-pause.C:
		}
	}
}
