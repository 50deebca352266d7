package actors

import (
	"time"

	"github.com/rmsd/rmsd/messages"
)

// Reaper cadence bounds: the reaper runs every TTL, clamped to this range.
const (
	minReaperInterval = time.Second
	maxReaperInterval = 300 * time.Second
)

// reaperInterval returns the reaper period for a terminal-job TTL.
func reaperInterval(ttl time.Duration) time.Duration {
	return min(max(ttl, minReaperInterval), maxReaperInterval)
}

// expiredEvictions lists the evictions one cleanup pass makes at now: every
// expired terminal job that no unexpired parent protects and that is not a
// parent with a child still present. A finished batch therefore leaves in two
// passes, children first. The store is not modified.
func (s *jobStore) expiredEvictions(now time.Time, ttl time.Duration) []messages.Event {
	protected := make(map[string]struct{})
	for _, r := range s.jobs {
		if len(r.snap.ChildIDs) > 0 && !r.expired(now, ttl) {
			for _, c := range r.snap.ChildIDs {
				protected[c] = struct{}{}
			}
		}
	}
	var evs []messages.Event
	for id, r := range s.jobs {
		if !r.expired(now, ttl) {
			continue
		}
		if _, ok := protected[id]; ok {
			continue
		}
		if s.anyChildPresent(r) || len(r.holds) > 0 { // still held: its workflow has not returned
			continue
		}
		evs = append(evs, messages.JobEvicted{ID: id})
	}
	return evs
}

func (s *jobStore) anyChildPresent(r *record) bool {
	for _, c := range r.snap.ChildIDs {
		if _, ok := s.jobs[c]; ok {
			return true
		}
	}
	return false
}
