package catalog

import (
	"context"
	"time"

	"github.com/rmsd/rmsd/store"
)

// DefaultClaimAfter is Options.ClaimAfter when none is given: six times
// the default membership timeout of ten seconds.
const DefaultClaimAfter = time.Minute

// claimBeats is how many heartbeats of a member at work fall within
// ClaimAfter: five in a row may fail (a slow store) before another member
// takes its download over.
const claimBeats = 6

// The takeover of the interrupted downloads of cluster members that are
// gone. A member's catalog stamps, every ClaimAfter/claimBeats, the
// heartbeat of every object whose download or re-verification it runs
// (store.Catalog.TouchFirmwareDownloads), and looks for objects other
// members download that are interrupted (unavailable with no reason, as a
// download under way is too). One whose heartbeat is ClaimAfter old,
// and whose member's row in the store was not written within ClaimAfter
// either (a member just started again keeps its objects), is claimed
// with the store's compare-and-set (store.Catalog.ClaimFirmwareDownload):
// of the members claiming at once exactly one gets it, and re-verifies
// it as its own interrupted download (reverify). The heartbeat, not the
// member's row, says whether the download runs: a stopping member marks
// its row left before its catalog cancels its downloads (rmsd's shutdown
// drains the racks' jobs in between), and the rows are written when the
// members' views change, not periodically.

// watchClaims starts the goroutine that keeps the heartbeat of this
// member's downloads and takes over those of members that are gone, one
// pass per receive from tick or, with none, every ClaimAfter/claimBeats.
// Close stops it.
func (s *Service) watchClaims(tick <-chan time.Time) {
	every := max(s.claimAfter/claimBeats, time.Millisecond)
	var ticker *time.Ticker
	if tick == nil {
		ticker = time.NewTicker(every)
		tick = ticker.C
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if ticker != nil {
			defer ticker.Stop()
		}
		for {
			select {
			case <-s.base.Done():
				return
			case <-tick:
			}
			ctx, cancel := context.WithTimeout(s.base, every)
			s.beat(ctx)
			s.takeOverQuiet(ctx)
			cancel()
		}
	}()
}

// beat stamps the heartbeat of the objects whose background work runs
// here. A failure is logged: the next beat tries again, and only
// claimBeats missed in a row let another member take a download over.
func (s *Service) beat(ctx context.Context) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.jobs))
	for id := range s.jobs {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	if err := s.store.TouchFirmwareDownloads(ctx, s.member, ids); err != nil && s.base.Err() == nil {
		s.log.Warn().Err(err).Int("objects", len(ids)).Dur("claim_after_ms", s.claimAfter).
			Msg("heartbeat of this member's firmware downloads not recorded; another member takes one over once none is for claim_after")
	}
}

// takeOverQuiet reads the catalog and takes over the interrupted
// downloads of other members that are gone.
func (s *Service) takeOverQuiet(ctx context.Context) {
	objs, err := s.store.ListFirmwareObjects(ctx, store.ObjectFilter{})
	if err != nil {
		if s.base.Err() == nil {
			s.log.Warn().Err(err).Msg("firmware objects not read; the downloads of members that are gone are looked for again next time")
		}
		return
	}
	var others []store.FirmwareObject
	for _, obj := range objs {
		if interrupted(obj) && obj.Downloader != "" && obj.Downloader != s.member {
			others = append(others, obj)
		}
	}
	s.takeOver(ctx, others)
}

// takeOver claims each of objs, other members' interrupted downloads, and
// starts re-verifying those it gets; it returns the others, as "id
// (member)".
func (s *Service) takeOver(ctx context.Context, objs []store.FirmwareObject) []string {
	var left []string
	for _, obj := range objs {
		if !s.claim(ctx, obj) {
			left = append(left, obj.ID+" ("+obj.Downloader+")")
		}
	}
	return left
}

// claim takes one interrupted download over from obj.Downloader if it is
// gone, and starts re-verifying it. Serialised with Add and Delete, so
// that the re-verification starts on the object claimed, not on one
// added again under its id.
func (s *Service) claim(ctx context.Context, obj store.FirmwareObject) bool {
	s.serial.Lock()
	defer s.serial.Unlock()
	log := s.log.With().Str("object_id", obj.ID).Str("from_member", obj.Downloader).Logger()
	ok, err := s.store.ClaimFirmwareDownload(ctx, obj.ID, obj.Downloader, s.member, s.claimAfter)
	if err != nil {
		if s.base.Err() == nil {
			log.Warn().Err(err).Msg("interrupted firmware download of another member not claimed; tried again next time")
		}
		return false
	}
	if !ok {
		return false
	}
	obj.Downloader = s.member
	log.Info().Dur("claim_after_ms", s.claimAfter).
		Msg("took over the interrupted firmware download of a cluster member quiet for claim_after: re-verifying its cached artifacts")
	s.start(obj.ID, func(ctx context.Context) { s.reverify(ctx, obj) })
	return true
}
