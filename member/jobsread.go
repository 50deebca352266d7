package member

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/grpc/codes"

	"github.com/rmsd/rmsd/member/rackpb"
)

// JobsReader is a RackService that also answers reads of the rack's jobs
// (a console showing the whole site, package sitejobs). A read may wait
// (a long poll of the rack's changes); it must end when the rack's engine
// stops.
type JobsReader interface {
	ReadJobs(ctx context.Context, read *rackpb.JobsRead) *rackpb.JobsReadReply
}

// ReadJobs delivers read to the grain of read.RackId, on whichever member
// the cluster places it, and returns its answer; it tries again while the
// identity moves between members, until ctx ends.
func (m *Member) ReadJobs(ctx context.Context, read *rackpb.JobsRead) (*rackpb.JobsReadReply, error) {
	if read.FromMember == "" {
		read.FromMember = m.cfg.MemberID
	}
	if dl, ok := ctx.Deadline(); ok && read.DeadlineUnixNano == 0 {
		read.DeadlineUnixNano = dl.UnixNano()
	}
	return requestRack[*rackpb.JobsReadReply](ctx, m, read.RackId, read)
}

// readJobs answers a read of the rack's jobs with the rack's service, on a
// goroutine of its own (a long poll waits there); UNAVAILABLE while the
// rack is being taken over or handed over. Reads are not counted among
// the calls a hand-over waits for: the service's stop ends them.
func (g *rackGrain) readJobs(ctx actor.Context, read *rackpb.JobsRead) {
	if g.holder != nil && !g.left {
		if _, acting := g.holder.Lease(); !acting {
			g.lose(g.holder)
		}
	}
	if g.left || g.holder == nil || g.svc == nil {
		u := g.unavailable()
		ctx.Respond(&rackpb.JobsReadReply{Code: u.Code, Message: u.Message, MemberId: u.MemberId})
		return
	}
	reader, ok := g.svc.(JobsReader)
	if !ok {
		ctx.Respond(&rackpb.JobsReadReply{Code: uint32(codes.Unimplemented), Message: "this member's racks answer no job reads", MemberId: g.m.cfg.MemberID})
		return
	}
	sender, root := ctx.Sender(), ctx.ActorSystem().Root
	deadline := time.Now().Add(g.m.cfg.MembershipTimeout)
	if read.DeadlineUnixNano != 0 {
		deadline = time.Unix(0, read.DeadlineUnixNano)
	}
	go func() {
		cctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		reply := reader.ReadJobs(cctx, read)
		reply.MemberId = g.m.cfg.MemberID
		root.Send(sender, reply)
	}()
}
