package member

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"

	"github.com/rmsd/rmsd/store"
)

// writeViewRow keeps this process's row of its view in the store: it
// joins (the member's next epoch) at the first tick, then writes the view
// whenever it has changed. A failed write is tried again at the next tick;
// a row a later start of this member id has taken is left to it.
func (m *Member) writeViewRow(ctx context.Context) {
	m.mu.Lock()
	row, version, current := m.row, m.rowVersion, m.viewVersion
	view := slices.Clone(m.viewSystems)
	m.mu.Unlock()
	if row.Epoch < 0 || (row.Epoch > 0 && version == current) {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, m.cfg.tick())
	defer cancel()
	if row.Epoch == 0 {
		joined, err := m.cfg.Store.JoinMember(wctx, m.cfg.MemberID, m.sys.ID, m.sys.Address())
		if err != nil {
			m.log.Warn().Err(err).Msg("member's view not recorded in the store; tried again next time")
			return
		}
		row = joined
	}
	row.View = view
	err := m.cfg.Store.WriteMemberView(wctx, row)
	switch {
	case errors.Is(err, store.ErrMemberSuperseded):
		m.log.Error().Err(err).Msg("another process has started under this member id; this one no longer records its view")
		row.Epoch = -1
	case err != nil:
		m.log.Warn().Err(err).Msg("member's view not recorded in the store; tried again next time")
	default:
		version = current
	}
	m.mu.Lock()
	m.row, m.rowVersion = row, version
	m.mu.Unlock()
}

// leaveViewRow marks this process's row as left, so that no member
// weighs its view after a partition any more. Called by Stop, once the
// watch has ended.
func (m *Member) leaveViewRow() {
	m.mu.Lock()
	row := m.row
	m.mu.Unlock()
	if row.Epoch <= 0 {
		return
	}
	row.Left = true
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.tick())
	defer cancel()
	if err := m.cfg.Store.WriteMemberView(ctx, row); err != nil {
		m.log.Warn().Err(err).Msg("member's row not marked as left in the store")
	}
}

// blockedPeer is a member this one has blocked, whose process is still
// the current one of its member id and has not left.
type blockedPeer struct {
	system, addr string
	row          store.MemberView
}

// blockedPeers returns the members this one has blocked that are worth
// asking, with every member's row by actor system id. A blocked member
// whose row names another process (restarted) or says it left is
// forgotten; one at the address of a member in the view is not asked
// (another process has the address now).
func (m *Member) blockedPeers(ctx context.Context) ([]blockedPeer, map[string]store.MemberView) {
	m.mu.Lock()
	left := maps.Clone(m.leftPeers)
	inView := map[string]bool{}
	for _, a := range m.view {
		inView[a] = true
	}
	m.mu.Unlock()
	if len(left) == 0 {
		return nil, nil
	}
	rctx, cancel := context.WithTimeout(ctx, m.cfg.tick())
	rows, err := m.cfg.Store.MemberViews(rctx)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			m.log.Debug().Err(err).Msg("members' views not read; the members this one blocked are asked next time")
		}
		return nil, nil
	}
	bySystem := make(map[string]store.MemberView, len(rows))
	for _, r := range rows {
		bySystem[r.System] = r
	}
	var out []blockedPeer
	var forget []string
	for sys, addr := range left {
		r, ok := bySystem[sys]
		switch {
		case !ok || r.Left || r.Member == m.cfg.MemberID || inView[addr]:
			forget = append(forget, sys)
		default:
			out = append(out, blockedPeer{system: sys, addr: addr, row: r})
		}
	}
	m.forgetLeft(forget...)
	return out, bySystem
}

// forgetLeft stops asking the blocked members systems.
func (m *Member) forgetLeft(systems ...string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range systems {
		delete(m.leftPeers, s)
	}
}

// askBlocked asks the members this one has blocked whether they have
// blocked it too, in parallel and each within one tick. A peer that does
// not answer (down, or still partitioned) says nothing; one that answers
// that it has not (this member stalled, or it is a new process at that
// address) is not a healed partition. A peer that has blocked this member
// too is the other side of a healed partition: both members weigh the
// two sides' views as the store has them (yields), and the cause of this
// member's fencing is returned if its side yields. Rows that do not yet
// show the mutual block are waited for (the next tick).
func (m *Member) askBlocked(ctx context.Context, probe *blockProbe, peers []blockedPeer, bySystem map[string]store.MemberView) error {
	self, ok := bySystem[m.sys.ID]
	if !ok {
		return nil // this process's row is not written yet
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		cause error
	)
	for _, p := range peers {
		wg.Go(func() {
			actx, cancel := context.WithTimeout(ctx, m.cfg.tick())
			defer cancel()
			a := probe.ask(actx, p.addr)
			switch {
			case a.err != nil:
				if ctx.Err() == nil {
					m.log.Debug().Err(a.err).Str("peer", p.addr).Msg("blocked member not asked whether it blocked this member; asked again next time")
				}
				return
			case a.peer != p.system:
				m.forgetLeft(p.system) // another process answers at that address
				return
			case !a.blocked:
				return
			}
			lg := m.log.With().Str("peer", p.addr).Str("peer_member", p.row.Member).Logger()
			if slices.Contains(self.View, p.system) || slices.Contains(p.row.View, m.sys.ID) {
				lg.Debug().Msg("mutual block found, but the store's views do not show it yet; weighed again next time")
				return
			}
			mine, theirs := sideOf(self, bySystem), sideOf(p.row, bySystem)
			if yields(m.cfg.MemberID, p.row.Member, mine, theirs) {
				mu.Lock()
				cause = &partitionError{peerAddr: p.addr, peerSystem: p.system, mine: mine, theirs: theirs}
				mu.Unlock()
				return
			}
			lg.Warn().Strs("side", mine).Strs("other_side", theirs).
				Msg("partition between members healed with each side blocking the other; the other side yields and fences itself")
		})
	}
	wg.Wait()
	return cause
}
