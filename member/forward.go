package member

import (
	"context"

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
	return requestRack[*rackpb.ForwardReply](ctx, m, fwd.RackId, fwd)
}
