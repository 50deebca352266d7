package member

import (
	"context"
	"sync"
	"time"
)

// Drain prepares the member's leaving (SIGTERM, a rolling upgrade): every
// rack active here refuses new jobs from now on, and Drain waits until
// none of them has a job in flight or ctx ends ([workflows]
// drain_timeout_seconds). It returns the jobs still in flight then; Stop
// hands the racks over, interrupting those. The racks keep answering
// reads and the jobs' calls while they drain.
func (m *Member) Drain(ctx context.Context) int {
	grains := m.localGrains()
	m.log.Info().Int("racks", len(grains)).Msg("member draining: its racks admit no new jobs")
	for _, pid := range grains {
		_, _ = m.sys.Root.RequestFuture(pid, &beginDrain{}, m.cfg.tick()).Result()
	}
	poll := time.NewTicker(max(m.cfg.tick()/10, 10*time.Millisecond))
	defer poll.Stop()
	for {
		n := m.inFlight()
		if n == 0 {
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

// inFlight counts the unfinished jobs on the racks active here.
func (m *Member) inFlight() int {
	n := 0
	for _, pid := range m.localGrains() {
		if res, err := m.sys.Root.RequestFuture(pid, &askInFlight{}, m.cfg.tick()).Result(); err == nil {
			n += res.(*drainState).inFlight
		}
	}
	return n
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
