package sitejobs

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// ParentRows bounds the cluster parents List shows: the newest ones.
// Each costs a read of each of its racks' batches at every listing,
// until it has ended.
const ParentRows = 100

// parentRows is the newest cluster parents (at most limit, at most
// ParentRows), each aggregated from its racks' batches as Get shows it.
// A parent one of whose racks did not answer is left out, and the rack
// is named in missed (the first failure in failure). A parent that has
// ended is not read again: its children have ended too.
func (s *Site) parentRows(ctx context.Context, limit int) (rows []messages.JobSnapshot, missed *UnreachableError, err error) {
	if limit <= 0 || limit > ParentRows {
		limit = ParentRows
	}
	parents, err := s.cfg.Store.ListClusterParents(ctx, limit)
	if err != nil {
		return nil, nil, fmt.Errorf("sitejobs: list the cluster parents: %w", err)
	}
	// The ended parents are kept as they were; the others are read again.
	var (
		other  error
		unread = make([]store.ClusterParent, 0, len(parents))
	)
	missed = &UnreachableError{}
	for _, p := range parents {
		if snap, ok := s.endedParent(p.ID); ok {
			rows = append(rows, snap)
			continue
		}
		unread = append(unread, p)
	}
	s.fanOut(len(unread), func(i int) func() {
		snaps, err := s.aggregate(ctx, unread[i], false)
		return func() {
			var re *rackError
			switch {
			case errors.As(err, &re):
				if !slices.Contains(missed.Racks, re.rack) {
					missed.Racks = append(missed.Racks, re.rack)
				}
				if missed.Err == nil {
					missed.Err = err
				}
			case err != nil:
				if other == nil {
					other = err
				}
			default:
				rows = append(rows, snaps[0])
				s.parentEnded(snaps[0])
			}
		}
	})
	if other != nil {
		return nil, nil, other
	}
	if len(missed.Racks) == 0 {
		missed = nil
	}
	return rows, missed, nil
}

// endedParent is the cluster parent id as last aggregated, if it had
// ended then.
func (s *Site) endedParent(id string) (messages.JobSnapshot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap, ok := s.ended[id]
	return snap, ok
}

// parentEnded keeps snap, a cluster parent's aggregate, once it has
// ended; the kept ones are forgotten all at once past a few listings'
// worth.
func (s *Site) parentEnded(snap messages.JobSnapshot) {
	if !snap.IsTerminal() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended == nil || len(s.ended) >= 4*ParentRows {
		s.ended = map[string]messages.JobSnapshot{}
	}
	s.ended[snap.ID] = snap
}

// alsoUnreachable adds the racks more names to err, the UnreachableError
// of a listing (nil when every rack answered).
func alsoUnreachable(err error, more *UnreachableError) error {
	if more == nil {
		return err
	}
	var u *UnreachableError
	if !errors.As(err, &u) {
		return more
	}
	for _, r := range more.Racks {
		if !slices.Contains(u.Racks, r) {
			u.Racks = append(u.Racks, r)
		}
	}
	slices.Sort(u.Racks)
	return u
}
