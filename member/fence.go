package member

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"

	"github.com/rmsd/rmsd/member/racklease"
)

// blockedError is the cause of a member's fencing: another member has
// blocked it from the cluster for good (protoactor never lets a blocked
// actor system back in), while it is alive and holds racks.
type blockedError struct {
	peerAddr, peerSystem, self string
}

func (e *blockedError) Error() string {
	return fmt.Sprintf("the member at %s (actor system %s) has blocked this member (actor system %s) from the cluster: "+
		"it will never again place a rack here, so this member no longer acts on its racks and releases them", e.peerAddr, e.peerSystem, e.self)
}

// fence is the message that makes a rack's grain stop acting on its rack
// at once and release it: the member is blocked. It answers fenced.
type fence struct{ cause error }

// fenced is the grain's answer to fence.
type fenced struct{}

// Blocked is closed once the member has found itself blocked by another
// member and fenced itself: its racks' services are abandoned and their
// leases released, and it takes no rack again. BlockedCause says why.
// The process should then leave (Stop) and start again, which joins the
// cluster under a new actor system id.
func (m *Member) Blocked() <-chan struct{} { return m.blocked }

// BlockedCause is why the member fenced itself (nil before Blocked is
// closed).
func (m *Member) BlockedCause() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.blockedCause
}

// fencing reports whether the member has fenced itself: its grains take
// no rack.
func (m *Member) fencing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.blockedCause != nil
}

// watchBlocked asks, every tick, every other member of this member's
// view of the cluster whether it has blocked this member, and fences the
// member at the first that has. A member that does not answer (down,
// partitioned, slow) says nothing: only a positive answer fences. It also
// keeps the member's row of its view in the store, and asks the members
// this one has blocked whether they have blocked it too: a partition
// between members has healed, and the side that yields fences itself
// (askBlocked).
func (m *Member) watchBlocked(ctx context.Context) {
	defer close(m.watchDone)
	probe := newBlockProbe(m.sys.ID, m.sys.Address(), m.c.Config.RemoteConfig.DialOptions)
	defer probe.close()
	t := time.NewTicker(m.cfg.tick())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		m.writeViewRow(ctx)
		peers := m.viewPeers()
		blocked, rows := m.blockedPeers(ctx)
		keep := maps.Clone(peers)
		for _, b := range blocked {
			keep[b.addr] = true
		}
		probe.keepOnly(keep)
		cause := m.askPeers(ctx, probe, peers)
		if cause == nil && len(blocked) > 0 {
			cause = m.askBlocked(ctx, probe, blocked, rows)
		}
		if cause != nil {
			m.fence(cause)
			return
		}
	}
}

// viewPeers returns the addresses of the other members in this member's
// view.
func (m *Member) viewPeers() map[string]bool {
	peers := map[string]bool{}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, addr := range m.view {
		if addr != m.sys.Address() {
			peers[addr] = true
		}
	}
	return peers
}

// askPeers asks every member of peers, in parallel and each within one
// tick, and returns the first block found.
func (m *Member) askPeers(ctx context.Context, probe *blockProbe, peers map[string]bool) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		cause error
	)
	for addr := range peers {
		wg.Go(func() {
			actx, cancel := context.WithTimeout(ctx, m.cfg.tick())
			defer cancel()
			a := probe.ask(actx, addr)
			switch {
			case a.err != nil:
				if ctx.Err() == nil {
					m.log.Debug().Err(a.err).Str("peer", addr).Msg("peer not asked whether it blocked this member; asked again next time")
				}
			case a.blocked:
				mu.Lock()
				cause = &blockedError{peerAddr: addr, peerSystem: a.peer, self: m.sys.ID}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return cause
}

// viewChanged records the member's view of the cluster from protoactor's
// topology event (published under the member list's lock, which its
// accessors do not take), and the members that left it, which protoactor
// has blocked for good.
func (m *Member) viewChanged(evt any) {
	t, ok := evt.(*cluster.ClusterTopology)
	if !ok {
		return
	}
	view := make([]string, 0, len(t.Members))
	systems := make([]string, 0, len(t.Members))
	for _, p := range t.Members {
		if p.Id != m.sys.ID {
			view = append(view, p.Address())
			systems = append(systems, p.Id)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.view, m.viewSystems = view, systems
	m.viewVersion++
	for _, p := range t.Left {
		if p.Id != m.sys.ID {
			m.leftPeers[p.Id] = p.Address()
		}
	}
}

// fence stops the member acting on every rack at once: each grain
// abandons its rack's service (workflows cancelled, nothing more
// journaled, as on a lost lease) and releases the lease so that the
// members the cluster now places the rack on take it without waiting for
// it to end; their replay seals the rack's unfinished jobs as
// interrupted. The member takes no rack again; Blocked is closed.
func (m *Member) fence(cause error) {
	m.mu.Lock()
	m.blockedCause = cause
	m.mu.Unlock()
	m.log.Error().Err(cause).Msg("member fencing itself: it stops acting on its racks and releases them")
	grains := m.localGrains()
	var wg sync.WaitGroup
	for _, pid := range grains {
		wg.Go(func() {
			_, _ = m.sys.Root.RequestFuture(pid, &fence{cause: cause}, m.cfg.MembershipTimeout).Result()
		})
	}
	wg.Wait()
	// A lease whose grain did not answer: releasing it stops its holder,
	// whose watch abandons the rack's service.
	m.mu.Lock()
	left := make([]*racklease.Holder, 0, len(m.holders))
	for _, h := range m.holders {
		left = append(left, h)
	}
	m.mu.Unlock()
	for _, h := range left {
		ctx, cancel := context.WithTimeout(context.Background(), m.cfg.tick())
		if err := h.Release(ctx); err != nil {
			m.log.Warn().Err(err).Msg("rack lease not released; it ends on its own")
		}
		cancel()
	}
	m.log.Error().Err(cause).Int("racks", len(grains)).Int("leases_released_without_grain", len(left)).Msg("member fenced: it acts on no rack")
	close(m.blocked)
}

// fence stops the grain acting on its rack for good: the member is
// blocked from the cluster. It answers fenced; during a hand-over, once
// the hand-over, cut short, has released the rack.
func (g *rackGrain) fence(ctx actor.Context, cause error) {
	if h := g.handing; h != nil {
		// The service is closing already: its jobs' window ends now, and
		// the hand-over interrupts them and releases the rack.
		h.cancel()
		h.answerWhenDone(ctx.Sender(), &fenced{})
		return
	}
	defer ctx.Respond(&fenced{})
	g.left = true
	if g.timer != nil {
		g.timer.Stop()
	}
	g.unwatch()
	if g.svc != nil {
		g.svc.Abandon(cause)
		g.svc = nil
		g.log.Error().Err(cause).Msg("rack fenced: this member no longer acts on the rack")
	}
	g.drop()
}
