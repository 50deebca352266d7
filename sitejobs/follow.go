package sitejobs

import (
	"context"
	"time"

	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/messages"
)

// Start gives the Site the cluster and starts following every registered
// rack's change log: one long poll per rack at a time, held by the owner
// up to Wait while nothing changes. It follows until Close.
func (s *Site) Start(c Cluster) {
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.cluster, s.cancel, s.done = c, cancel, make(chan struct{})
	s.mu.Unlock()
	go s.follow(ctx)
}

// Close stops following and ends every subscription; safe without Start.
func (s *Site) Close() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel = nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	s.feed.Close()
}

// follow keeps one poller per registered rack, reading the racks again
// every RackRefresh.
func (s *Site) follow(ctx context.Context) {
	defer close(s.done)
	pollers := map[string]context.CancelFunc{}
	ended := make(chan struct{}, 1)
	running := 0
	defer func() {
		for _, stop := range pollers {
			stop()
		}
		for ; running > 0; running-- {
			<-ended
		}
	}()
	t := time.NewTicker(s.cfg.RackRefresh)
	defer t.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, s.cfg.ReadTimeout)
		racks, err := s.cfg.Store.ListRacks(lctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			s.cfg.Log.Warn().Err(err).Msg("registered racks not read; the console follows the racks it knew")
		}
		if err == nil {
			seen := map[string]bool{}
			for _, r := range racks {
				seen[r.RackID] = true
				if pollers[r.RackID] == nil {
					pctx, stop := context.WithCancel(ctx)
					pollers[r.RackID] = stop
					running++
					go func() {
						defer func() { ended <- struct{}{} }()
						s.poll(pctx, r.RackID)
					}()
				}
			}
			for id, stop := range pollers {
				if !seen[id] {
					stop()
					delete(pollers, id)
				}
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-ended:
				running--
				continue
			case <-t.C:
			}
			break
		}
	}
}

// poll follows one rack's change log until ctx ends: each answer's
// changes are published in order; a cursor the owner no longer has
// (another owner now, or the log lost changes) drops every subscriber.
func (s *Site) poll(ctx context.Context, rackID string) {
	var log string
	var seq uint64
	retry := time.NewTimer(0)
	<-retry.C
	defer retry.Stop()
	wait := s.cfg.Wait.Milliseconds()
	for ctx.Err() == nil {
		reply, err := s.pollOnce(ctx, rackID, &rackpb.RackChangesSince{Log: log, Seq: seq, WaitMs: wait})
		if err != nil {
			if ctx.Err() == nil {
				s.cfg.Log.Debug().Err(err).Str("rack_id", rackID).Msg("rack's job changes not read; trying again")
			}
			retry.Reset(s.cfg.Retry)
			select {
			case <-ctx.Done():
				return
			case <-retry.C:
			}
			continue
		}
		if reply.GetCursorLost() {
			s.cfg.Log.Info().Str("rack_id", rackID).Str("member", reply.GetMemberId()).
				Msg("rack's job changes lost (a new owner, or the log fell behind): the console's streams reload")
			s.feed.Drop()
		}
		if log == "" && s.followed != nil {
			s.followed(rackID)
		}
		log, seq = reply.GetLog(), reply.GetSeq()
		changes := make([]messages.JobChange, len(reply.GetChanges()))
		for i, c := range reply.GetChanges() {
			changes[i] = change(c)
		}
		s.feed.Publish(changes...)
	}
}

// pollOnce is one long poll of rackID's changes.
func (s *Site) pollOnce(ctx context.Context, rackID string, since *rackpb.RackChangesSince) (*rackpb.JobsReadReply, error) {
	return s.readWithin(ctx, s.cfg.Wait+s.cfg.ReadTimeout, rackID, &rackpb.JobsRead{Read: &rackpb.JobsRead_Changes{Changes: since}})
}
