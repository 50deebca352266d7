package member

import (
	"context"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/asynkron/protoactor-go/cluster"

	"github.com/rmsd/rmsd/member/rackpb"
)

// Drain prepares the member's leaving (SIGTERM, a rolling upgrade): every
// rack active here refuses new jobs from now on. The racks with no job in
// flight are handed over at once, and each other rack as soon as its jobs
// have ended: the member publishes that it drains, keeping only its busy
// racks (placement), so the other members activate the idle ones, while
// every call for a kept rack still reaches it here. Drain returns when no
// kept rack is left, or when ctx ends ([workflows]
// drain_timeout_seconds) with the jobs still in flight then; Stop hands
// the remaining racks over, interrupting those.
func (m *Member) Drain(ctx context.Context) int {
	// First the member drains keeping every rack active here: from then
	// on it activates no other rack, and a grain starting now starts
	// draining (it admits no job). Every grain started before is in the
	// list read next, and is asked to drain and for its jobs.
	m.place.drain(slices.Collect(maps.Keys(m.localGrains())))
	grains := m.localGrains()
	m.log.Info().Int("racks", len(grains)).Msg("member draining: its racks admit no new jobs")
	var kept []string
	for rackID, pid := range grains {
		res, err := m.sys.Root.RequestFuture(pid, &beginDrain{}, m.cfg.tick()).Result()
		if st, ok := res.(*drainState); err != nil || !ok || st.inFlight > 0 {
			// A grain that does not answer is kept too: it may run jobs.
			kept = append(kept, rackID)
		}
	}
	sort.Strings(kept)
	m.place.drain(kept)
	m.log.Info().Strs("kept_racks", kept).Msg("member draining: its idle racks are handed over, the others once their jobs end")
	m.handOverIdle()

	poll := time.NewTicker(max(m.cfg.tick()/10, 10*time.Millisecond))
	defer poll.Stop()
	for {
		var still []string
		n := 0
		grains := m.localGrains()
		for _, rackID := range kept {
			if pid, ok := grains[rackID]; ok {
				// A grain that does not answer is kept: it may run jobs.
				if jobs, answered := m.inFlight(pid); jobs > 0 || !answered {
					still, n = append(still, rackID), n+jobs
					continue
				}
			}
			m.place.keepNoLonger(rackID)
		}
		if len(still) < len(kept) {
			kept = still
			m.handOverIdle()
		}
		if len(still) == 0 {
			m.log.Info().Msg("member drained: no job in flight on its racks")
			return 0
		}
		select {
		case <-ctx.Done():
			m.log.Warn().Int("jobs_in_flight", n).Msg("drain deadline reached: the jobs still running are interrupted at hand-over")
			return n
		case <-poll.C:
		}
	}
}

// inFlight returns the unfinished jobs of the rack whose grain is pid,
// and whether the grain answered.
func (m *Member) inFlight(pid *actor.PID) (int, bool) {
	res, err := m.sys.Root.RequestFuture(pid, &askInFlight{}, m.cfg.tick()).Result()
	if st, ok := res.(*drainState); err == nil && ok {
		return st.inFlight, true
	}
	return 0, false
}

// handOverIdle hands over, in parallel, every rack active here that the
// placement now puts on another member (a draining member's racks but the
// kept ones): its service stops and its lease is released, its grain
// stops, and the rack is touched so that the member it is placed on
// activates it and takes it at once.
func (m *Member) handOverIdle() {
	var wg sync.WaitGroup
	for rackID, pid := range m.localGrains() {
		if m.place.here(cluster.NewClusterIdentity(rackID, rackKind)) {
			continue
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), m.cfg.tick())
			defer cancel()
			_, _ = m.sys.Root.RequestFuture(pid, &handOver{ctx: ctx}, 2*m.cfg.MembershipTimeout).Result()
			_ = m.sys.Root.PoisonFuture(pid).Wait()
			_, err := m.c.Request(rackID, rackKind, &rackpb.RackTouch{FromMember: m.cfg.MemberID}, cluster.WithTimeout(m.cfg.tick()))
			if err != nil {
				m.log.Debug().Err(err).Str("rack_id", rackID).Msg("rack handed over but its next owner not reached yet; the touches go on")
			}
		})
	}
	wg.Wait()
}

// handOverAll hands every rack active here over, in parallel: its
// service stops within a quarter of the membership timeout (Drain gave its
// jobs their window already) and its lease is released, so the member
// that the cluster places it on next takes it without waiting for the
// lease to end.
func (m *Member) handOverAll() {
	var wg sync.WaitGroup
	for _, pid := range m.localGrains() {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), m.cfg.tick())
			defer cancel()
			_, _ = m.sys.Root.RequestFuture(pid, &handOver{ctx: ctx}, 2*m.cfg.MembershipTimeout).Result()
		})
	}
	wg.Wait()
}
