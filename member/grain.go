package member

import (
	"context"
	"errors"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/member/racklease"
	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/store"
)

// rackKind is the cluster kind of the rack grains; a grain's cluster
// identity is rack/<rack_id>.
const rackKind = "rack"

// check is the grain's own periodic message: take the rack if it has no
// lease, notice a lease that is no longer its own.
type check struct{}

// rackGrain is one rack's activation on this member: while active, it
// holds the rack's lease or waits for an earlier owner's to end.
type rackGrain struct {
	m      *Member
	rackID string
	log    zerolog.Logger
	holder *racklease.Holder
	// waitingOn is the member whose lease this grain waits for ("" when
	// it holds the rack or has not tried yet): logged once per owner.
	waitingOn string
	timer     *time.Timer
}

// Receive implements actor.Actor.
func (g *rackGrain) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		g.rackID = cluster.GetClusterIdentity(ctx).Identity
		g.log = g.m.log.With().Str("rack_id", g.rackID).Logger()
		g.log.Info().Msg("rack grain activated on this member")
		g.take()
		g.arm(ctx)
	case *check:
		if g.holder != nil {
			if _, acting := g.holder.Lease(); !acting {
				_, why := g.holder.LostAt()
				g.log.Error().Err(why).Msg("rack ownership lost: this member no longer acts on the rack; it tries to take it again")
				g.drop()
			}
		}
		if g.holder == nil {
			g.take()
		}
		g.arm(ctx)
	case *rackpb.RackTouch:
		ctx.Respond(g.status())
	case *actor.Stopping:
		if g.timer != nil {
			g.timer.Stop()
		}
		g.drop()
		g.log.Info().Msg("rack grain stopped on this member")
	}
}

// arm schedules the next check.
func (g *rackGrain) arm(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	g.timer = time.AfterFunc(g.m.cfg.tick(), func() { root.Send(self, &check{}) })
}

// take tries to acquire the rack's lease, within one tick.
func (g *rackGrain) take() {
	ctx, cancel := context.WithTimeout(context.Background(), g.m.cfg.tick())
	defer cancel()
	h, err := racklease.Acquire(ctx, g.m.cfg.Store, g.rackID, g.m.cfg.MemberID, g.m.cfg.MembershipTimeout, racklease.Options{})
	var held *store.RackHeldError
	switch {
	case errors.As(err, &held):
		if held.Owner.Member != g.waitingOn {
			g.waitingOn = held.Owner.Member
			g.log.Info().Str("owner", held.Owner.Member).Int64("owner_epoch", held.Owner.Epoch).Time("owner_expires", held.Owner.Expires).
				Msg("rack still leased by another member; this member takes it once that lease ends")
		}
		return
	case err != nil:
		g.log.Warn().Err(err).Msg("rack lease not taken; trying again")
		return
	}
	g.holder, g.waitingOn = h, ""
	lease, _ := h.Lease()
	g.m.held(g.rackID, h)
	g.log.Info().Int64("epoch", lease.Epoch).Time("expires", lease.Expires).Msg("rack owned by this member")
}

// drop releases the lease, if any, within one tick.
func (g *rackGrain) drop() {
	if g.holder == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), g.m.cfg.tick())
	defer cancel()
	lease, _ := g.holder.Lease()
	if err := g.holder.Release(ctx); err != nil {
		g.log.Warn().Err(err).Msg("rack lease not released; it ends on its own")
	} else {
		g.log.Info().Int64("epoch", lease.Epoch).Msg("rack released by this member")
	}
	g.m.unheld(g.rackID, g.holder)
	g.holder = nil
}

// status is the grain's answer to a touch.
func (g *rackGrain) status() *rackpb.RackStatus {
	s := &rackpb.RackStatus{RackId: g.rackID, MemberId: g.m.cfg.MemberID}
	if g.holder != nil {
		if lease, acting := g.holder.Lease(); acting {
			s.Owner, s.Epoch = true, lease.Epoch
		}
	}
	return s
}
