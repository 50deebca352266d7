package member

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"
	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"

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

// lost tells the grain that the lease of holder stopped acting; its
// service was abandoned already.
type lost struct{ holder *racklease.Holder }

// beginDrain asks the grain to refuse new jobs for its rack (a draining
// member); it answers drainState.
type beginDrain struct{}

// askInFlight asks the grain for its rack's unfinished jobs; it answers
// drainState.
type askInFlight struct{}

// drainState is a grain's answer to beginDrain and askInFlight.
type drainState struct{ inFlight int }

// handOver asks the grain to stop its service within the context's
// deadline, release the rack and not take it again: the member is
// leaving. It answers handedOver once the rack is released
// (handover.go).
type handOver struct{ ctx context.Context }

// handedOver is the grain's answer to handOver.
type handedOver struct{}

// retire tells the grain that the rack is placed on another member now:
// it hands the rack over within the hand-over window, then stops
// (handover.go).
type retire struct{}

// rackGrain is one rack's activation on this member: while active, it
// holds the rack's lease and runs the rack's service, or waits for an
// earlier owner's lease to end.
type rackGrain struct {
	m      *Member
	rackID string
	log    zerolog.Logger
	holder *racklease.Holder
	// svc is the rack's service, set while the grain holds the lease and
	// the service has opened (its replay sealed the earlier owner's jobs).
	svc RackService
	// stopWatch ends the goroutine that abandons svc when the lease is
	// lost; watchDone is closed when it has ended.
	stopWatch, watchDone chan struct{}
	// serving counts the forwarded calls whose answer is under way.
	serving sync.WaitGroup
	// waitingOn is the member whose lease this grain waits for ("" when
	// it holds the rack or has not tried yet): logged once per owner.
	waitingOn string
	// draining: the member is leaving; left: the rack is being handed
	// over, or was, and is not taken again here.
	draining, left bool
	// handing is the hand-over under way (nil when none): while it runs,
	// holder and svc are the goroutine's to close and release, and the
	// grain only reads them.
	handing *handOff
	// elsewhere counts the consecutive checks at which the membership
	// placed the rack on another member (misplaced).
	elsewhere int
	timer     *time.Timer
}

// Receive implements actor.Actor.
func (g *rackGrain) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		g.rackID = cluster.GetClusterIdentity(ctx).Identity
		g.log = g.m.log.With().Str("rack_id", g.rackID).Logger()
		g.log.Info().Msg("rack grain activated on this member")
		g.m.grainStarted(g.rackID, ctx.Self())
		// A grain activated on a draining member (every member drains)
		// admits no new job either.
		g.draining = g.m.place.draining()
		g.take(ctx)
		g.arm(ctx)
	case *check:
		if g.handing != nil || g.misplaced(ctx) {
			return
		}
		if g.holder != nil {
			if _, acting := g.holder.Lease(); !acting {
				g.lose(g.holder)
			}
		}
		if g.holder == nil {
			g.take(ctx)
		}
		g.arm(ctx)
	case *lost:
		// During a hand-over the watch has ended and the lease is the
		// hand-over's to release.
		if g.holder == msg.holder && g.handing == nil {
			g.lose(g.holder)
		}
	case *rackpb.RackTouch:
		ctx.Respond(g.status())
	case *rackpb.Forward:
		g.forward(ctx, msg)
	case *rackpb.JobsRead:
		g.readJobs(ctx, msg)
	case *beginDrain:
		g.draining = true
		if g.svc != nil {
			g.svc.BeginDrain()
		}
		ctx.Respond(g.drainState())
	case *askInFlight:
		ctx.Respond(g.drainState())
	case *handOver:
		g.handOver(ctx, msg.ctx)
	case *retire:
		g.retire(ctx)
	case *handOverDone:
		g.handedOver(ctx, msg.h, false)
	case *fence:
		g.fence(ctx, msg.cause)
	case *actor.Stopping:
		g.stopping(ctx)
		g.m.grainStopped(g.rackID, ctx.Self())
		g.log.Info().Msg("rack grain stopped on this member")
	}
}

// misplaced retires the grain (it hands the rack over, then stops) when
// the membership has placed the rack on another member at two checks in
// a row: an activation made under an older view of the membership, which
// protoactor does not move when the view changes under it. It reports
// whether the grain is retiring.
func (g *rackGrain) misplaced(ctx actor.Context) bool {
	owner := g.m.placement(g.rackID)
	if owner == "" || owner == g.m.sys.Address() {
		g.elsewhere = 0
		return false
	}
	if g.elsewhere++; g.elsewhere < 2 {
		return false
	}
	g.log.Warn().Str("placed_on", owner).Msg("rack placed on another member by the membership: handing it over")
	g.retire(ctx)
	return true
}

// arm schedules the next check.
func (g *rackGrain) arm(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	g.timer = time.AfterFunc(g.m.cfg.tick(), func() { root.Send(self, &check{}) })
}

// take tries to acquire the rack's lease, within one tick, and then opens
// the rack's service, within a membership timeout.
func (g *rackGrain) take(ctx actor.Context) {
	if g.left || g.m.fencing() {
		return
	}
	actx, cancel := context.WithTimeout(context.Background(), g.m.cfg.tick())
	defer cancel()
	previous := ""
	switch prev, err := g.m.cfg.Store.RackOwner(actx, g.rackID); {
	case err == nil:
		previous = prev.Member
	case !errors.Is(err, store.ErrNotFound):
		g.log.Warn().Err(err).Msg("rack's owner not read; trying again")
		return
	}
	h, err := racklease.Acquire(actx, g.m.cfg.Store, g.rackID, g.m.cfg.MemberID, g.m.cfg.MembershipTimeout, racklease.Options{})
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
	g.holder, g.waitingOn = h, previous
	lease, _ := h.Lease()
	g.m.held(g.rackID, h)
	g.log.Info().Int64("epoch", lease.Epoch).Time("expires", lease.Expires).Str("previous_owner", previous).Msg("rack owned by this member")
	if g.m.cfg.OpenRack == nil {
		g.waitingOn = ""
		return
	}
	started := time.Now()
	octx, ocancel := context.WithTimeout(context.Background(), g.m.cfg.MembershipTimeout)
	svc, err := g.m.cfg.OpenRack(octx, g.rackID, h.Lease, previous)
	ocancel()
	if err != nil {
		g.log.Error().Err(err).Msg("rack's service not opened; the rack is released and taken again")
		g.drop()
		return
	}
	if _, acting := h.Lease(); !acting {
		// Lost while the service opened: it must not act.
		_, why := h.LostAt()
		svc.Abandon(why)
		g.lose(h)
		return
	}
	g.svc, g.waitingOn = svc, ""
	if g.draining {
		svc.BeginDrain()
	}
	g.watch(ctx, h, svc)
	g.log.Info().Int64("epoch", lease.Epoch).Int64("open_ms", time.Since(started).Milliseconds()).Msg("rack serving on this member")
}

// watch abandons svc the moment h stops acting (a renewal refused or
// none in time), without waiting for the grain's turn: the member stops
// acting on the rack before the store lets another member take it.
func (g *rackGrain) watch(ctx actor.Context, h *racklease.Holder, svc RackService) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	stop, done := make(chan struct{}), make(chan struct{})
	g.stopWatch, g.watchDone = stop, done
	go func() {
		defer close(done)
		select {
		case <-h.Lost():
			_, why := h.LostAt()
			svc.Abandon(why)
			root.Send(self, &lost{holder: h})
		case <-stop:
		}
	}()
}

// unwatch ends the watch goroutine, if any.
func (g *rackGrain) unwatch() {
	if g.stopWatch == nil {
		return
	}
	close(g.stopWatch)
	<-g.watchDone
	g.stopWatch, g.watchDone = nil, nil
}

// lose handles a lease that stopped acting: the service is abandoned (at
// once, by the watch; again here, harmlessly) and the grain tries to take
// the rack again at its next check.
func (g *rackGrain) lose(h *racklease.Holder) {
	_, why := h.LostAt()
	g.log.Error().Err(why).Msg("rack ownership lost: this member no longer acts on the rack; it tries to take it again")
	g.unwatch()
	if g.svc != nil {
		g.svc.Abandon(why)
		g.svc = nil
	}
	g.drop()
}

// closeService stops the rack's service svc: it admits no new job, the
// calls under way answer, the running jobs get until ctx ends to end by
// themselves, and those still running then are interrupted. It runs on
// the hand-over's goroutine and touches none of the grain's state.
func (g *rackGrain) closeService(ctx context.Context, svc RackService) {
	svc.BeginDrain()
	g.serving.Wait()
	started := time.Now()
	if n := svc.InFlight(); n > 0 {
		g.log.Info().Int("jobs_in_flight", n).Msg("rack handing over: waiting for its jobs to end")
		poll := time.NewTicker(max(g.m.cfg.tick()/10, 10*time.Millisecond))
	wait:
		for svc.InFlight() > 0 {
			select {
			case <-ctx.Done():
				break wait
			case <-poll.C:
			}
		}
		poll.Stop()
	}
	inFlight := svc.InFlight()
	if err := svc.Close(ctx); err != nil {
		g.log.Error().Err(err).Msg("rack's service did not stop cleanly")
	}
	g.log.Info().Int("jobs_interrupted", inFlight).Int64("waited_ms", time.Since(started).Milliseconds()).Msg("rack's service stopped on this member")
}

// drop releases the lease, if any, within one tick.
func (g *rackGrain) drop() {
	if g.holder == nil {
		return
	}
	g.release(g.holder)
	g.holder = nil
}

// release releases h within one tick and forgets it in the member's
// record. It touches none of the grain's state (a hand-over's goroutine
// calls it).
func (g *rackGrain) release(h *racklease.Holder) {
	ctx, cancel := context.WithTimeout(context.Background(), g.m.cfg.tick())
	defer cancel()
	lease, _ := h.Lease()
	if err := h.Release(ctx); err != nil {
		g.log.Warn().Err(err).Msg("rack lease not released; it ends on its own")
	} else {
		g.log.Info().Int64("epoch", lease.Epoch).Msg("rack released by this member")
	}
	g.m.unheld(g.rackID, h)
}

// forward answers a call carried from another member (or this one): with
// the rack's service while the grain holds the lease, on a goroutine of
// its own so that one slow call does not hold up the rack's others;
// UNAVAILABLE while the rack is being taken over or handed over.
func (g *rackGrain) forward(ctx actor.Context, fwd *rackpb.Forward) {
	if g.left {
		ctx.Respond(g.unavailable())
		return
	}
	if g.holder != nil && g.svc != nil {
		if _, acting := g.holder.Lease(); !acting {
			g.lose(g.holder)
		}
	}
	if g.holder == nil || g.svc == nil {
		ctx.Respond(g.unavailable())
		return
	}
	lease, _ := g.holder.Lease()
	svc, sender, root := g.svc, ctx.Sender(), ctx.ActorSystem().Root
	deadline := time.Now().Add(g.m.cfg.MembershipTimeout)
	if fwd.DeadlineUnixNano != 0 {
		deadline = time.Unix(0, fwd.DeadlineUnixNano)
	}
	g.serving.Add(1)
	go func() {
		defer g.serving.Done()
		cctx, cancel := context.WithDeadline(context.Background(), deadline)
		defer cancel()
		reply := svc.Serve(cctx, fwd)
		reply.MemberId, reply.Epoch = g.m.cfg.MemberID, lease.Epoch
		root.Send(sender, reply)
	}()
}

// unavailable is the answer to a call the grain cannot serve now.
func (g *rackGrain) unavailable() *rackpb.ForwardReply {
	var msg string
	switch {
	case g.left || g.draining:
		msg = fmt.Sprintf("rack %s is being handed over by member %s; retry", g.rackID, g.m.cfg.MemberID)
	case g.waitingOn != "":
		msg = fmt.Sprintf("rack %s is being taken over from member %s; retry", g.rackID, g.waitingOn)
	default:
		msg = fmt.Sprintf("rack %s is being taken over by member %s; retry", g.rackID, g.m.cfg.MemberID)
	}
	return &rackpb.ForwardReply{Code: uint32(codes.Unavailable), Message: msg, MemberId: g.m.cfg.MemberID}
}

// drainState is the grain's answer to a draining member.
func (g *rackGrain) drainState() *drainState {
	if g.svc == nil {
		return &drainState{}
	}
	return &drainState{inFlight: g.svc.InFlight()}
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
