package member

import (
	"context"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// A rack leaves this member by a hand-over: its service closes (the jobs
// get the hand-over window to end, then what still runs is interrupted)
// and only then is its lease released for the next owner. The hand-over
// runs on a goroutine of its own, not in the grain's turn: a grain busy
// for the whole window would leave the calls queued behind it unanswered
// until their callers' deadlines, and protoactor drops whatever is still
// queued once an actor stops (grainMailbox). Meanwhile the grain answers
// every call UNAVAILABLE, which the caller retries; the grain stops only
// once the rack is released.

// handOff is one hand-over under way.
type handOff struct {
	// done is closed once the service has closed and the lease is
	// released.
	done chan struct{}
	// cancel ends the jobs' window at once (a fence).
	cancel context.CancelFunc
	// answers go, once the hand-over has ended, to the requests that
	// wait for it (handOver, fence).
	answers []owed
	// stop: the grain stops once the hand-over has ended (retire).
	stop bool
	// epoch is the lease's, held tells whether there was one.
	epoch int64
	held  bool
}

// owed is a reply owed to a request's sender.
type owed struct {
	to  *actor.PID
	msg any
}

// answerWhenDone owes msg to the sender of a request (none for a message
// that was only sent).
func (h *handOff) answerWhenDone(to *actor.PID, msg any) {
	if to != nil {
		h.answers = append(h.answers, owed{to: to, msg: msg})
	}
}

// handOverDone tells the grain that the hand-over h has ended.
type handOverDone struct{ h *handOff }

// beginHandOver starts handing the rack over, unless a hand-over is under
// way already, and returns the one under way. The jobs get until parent
// ends, and at most window when window > 0.
func (g *rackGrain) beginHandOver(ctx actor.Context, parent context.Context, window time.Duration) *handOff {
	if g.handing != nil {
		return g.handing
	}
	g.left = true
	if g.timer != nil {
		g.timer.Stop()
	}
	g.unwatch()
	var (
		wctx   context.Context
		cancel context.CancelFunc
	)
	if window > 0 {
		wctx, cancel = context.WithTimeout(parent, window)
	} else {
		wctx, cancel = context.WithCancel(parent)
	}
	h := &handOff{done: make(chan struct{}), cancel: cancel}
	svc, holder := g.svc, g.holder
	if holder != nil {
		lease, _ := holder.Lease()
		h.epoch, h.held = lease.Epoch, true
	}
	g.handing = h
	self, root := ctx.Self(), ctx.ActorSystem().Root
	go func() {
		defer close(h.done)
		defer cancel()
		if svc != nil {
			g.closeService(wctx, svc)
		}
		if holder != nil {
			g.release(holder)
		}
		// Before done: a grain waiting on done in its Stopping has not
		// yet stopped, and its mailbox takes the message.
		root.Send(self, &handOverDone{h: h})
	}()
	return h
}

// handedOver ends the hand-over h in the grain, once its goroutine has
// ended: the waiting requests are answered, and the grain stops if it
// was retired (unless it is stopping already).
func (g *rackGrain) handedOver(ctx actor.Context, h *handOff, stopping bool) {
	if g.handing != h {
		return
	}
	g.handing, g.svc, g.holder = nil, nil, nil
	if h.held {
		g.log.Info().Int64("epoch", h.epoch).Msg("rack handed over by this member")
	}
	for _, a := range h.answers {
		ctx.Send(a.to, a.msg)
	}
	if h.stop && !stopping {
		ctx.Stop(ctx.Self())
	}
}

// handOver hands the rack over for good within the context's deadline
// (the member is leaving) and answers handedOver once the rack is
// released: at once when it was already.
func (g *rackGrain) handOver(ctx actor.Context, window context.Context) {
	if g.left && g.handing == nil {
		ctx.Respond(&handedOver{})
		return
	}
	g.beginHandOver(ctx, window, 0).answerWhenDone(ctx.Sender(), &handedOver{})
}

// retire hands the rack over within the hand-over window (the placement
// has moved it to another member), and stops the grain once the rack is
// released: at once when it was already.
func (g *rackGrain) retire(ctx actor.Context) {
	if g.left && g.handing == nil {
		ctx.Stop(ctx.Self())
		return
	}
	g.beginHandOver(ctx, context.Background(), g.m.cfg.handOverTimeout()).stop = true
}

// stopping is the grain's Stopping: a hand-over under way ends first, and
// a rack still held (the grain was stopped without a hand-over: its
// member is shutting down) is handed over now, within the hand-over
// window. Either way the lease is released only after the service
// closed. The calls queued meanwhile are answered once the grain has
// stopped (grainMailbox).
func (g *rackGrain) stopping(ctx actor.Context) {
	if g.timer != nil {
		g.timer.Stop()
	}
	h := g.handing
	if h == nil && (g.svc != nil || g.holder != nil) {
		h = g.beginHandOver(ctx, context.Background(), g.m.cfg.handOverTimeout())
	}
	if h == nil {
		return
	}
	<-h.done
	g.handedOver(ctx, h, true)
}
