package actors

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rmsd/rmsd/messages"
)

// errBadEvent marks an event that does not fit the current state.
var errBadEvent = errors.New("jobs: event does not apply")

// apply is the one function that changes a jobStore's index. It is
// deterministic: the result depends only on the store and the event (times
// travel inside the events), so replaying a journal of events rebuilds the
// same index. An event that does not fit (unknown job, terminal overwrite)
// changes nothing and returns an error.
func (s *jobStore) apply(ev messages.Event) error {
	switch e := ev.(type) {
	case messages.JobCreated:
		if _, ok := s.jobs[e.ID]; ok {
			return fmt.Errorf("create %s: %w", e.ID, messages.ErrDuplicateJob)
		}
		s.jobs[e.ID] = &record{snap: messages.JobSnapshot{
			ID: e.ID, ParentID: e.ParentID, Type: e.Type, State: e.State,
			Description: e.Description, RackID: e.RackID, NodeID: e.NodeID,
			CreatedAt: e.At, UpdatedAt: e.At,
		}}
	case messages.ChildAttached:
		p, ok := s.jobs[e.ParentID]
		if !ok || p.snap.State.IsTerminal() || p.snap.ParentID != "" {
			return fmt.Errorf("attach %s to %s: %w", e.ChildID, e.ParentID, errBadEvent)
		}
		if _, ok := s.jobs[e.ChildID]; !ok {
			return fmt.Errorf("attach %s: %w", e.ChildID, messages.ErrJobNotFound)
		}
		p.snap.ChildIDs = append(p.snap.ChildIDs, e.ChildID)
		p.snap.UpdatedAt = e.At
		s.openParents[e.ParentID] = struct{}{}
	case messages.JobStarted:
		r, err := s.live(e.ID)
		if err != nil {
			return err
		}
		if r.snap.State != messages.StateQueued {
			return fmt.Errorf("start %s from %s: %w", e.ID, r.snap.State, errBadEvent)
		}
		r.snap.State, r.snap.Description, r.snap.UpdatedAt = messages.StateRunning, e.Description, e.At
	case messages.JobProgressed:
		r, err := s.live(e.ID)
		if err != nil {
			return err
		}
		if r.snap.State != messages.StateRunning {
			return fmt.Errorf("progress %s from %s: %w", e.ID, r.snap.State, errBadEvent)
		}
		r.snap.Description, r.snap.UpdatedAt = e.Description, e.At
	case messages.JobCompleted:
		r, err := s.live(e.ID)
		if err != nil {
			return err
		}
		r.snap.State, r.snap.Description, r.snap.ResultJSON, r.snap.UpdatedAt =
			messages.StateCompleted, e.Description, e.ResultJSON, e.At
		delete(s.openParents, e.ID)
	case messages.JobFailed:
		r, err := s.live(e.ID)
		if err != nil {
			return err
		}
		r.snap.State, r.snap.Description, r.snap.UpdatedAt = messages.StateFailed, e.Description, e.At
		r.snap.ErrorCode, r.snap.ErrorMessage, r.snap.ResultJSON = e.Code, e.Message, e.ResultJSON
		delete(s.openParents, e.ID)
	case messages.NodeLocked:
		k := nodeKey{e.RackID, e.NodeID}
		if slices.Contains(s.byNode[k], e.JobID) {
			return fmt.Errorf("lock %s/%s for %s: %w", e.RackID, e.NodeID, e.JobID, errBadEvent)
		}
		s.byNode[k] = append(s.byNode[k], e.JobID)
	case messages.NodeReleased:
		k := nodeKey{e.RackID, e.NodeID}
		ids := s.byNode[k]
		i := slices.Index(ids, e.JobID)
		if i < 0 {
			return fmt.Errorf("release %s/%s for %s: %w", e.RackID, e.NodeID, e.JobID, errBadEvent)
		}
		ids = slices.Delete(ids, i, i+1)
		if len(ids) == 0 {
			delete(s.byNode, k)
		} else {
			s.byNode[k] = ids
		}
	case messages.JobEvicted:
		if _, ok := s.jobs[e.ID]; !ok {
			return fmt.Errorf("evict %s: %w", e.ID, messages.ErrJobNotFound)
		}
		delete(s.jobs, e.ID)
		delete(s.openParents, e.ID)
	case messages.ShutdownBegun:
		s.shuttingDown = true
	default:
		return fmt.Errorf("event %T: %w", ev, errBadEvent)
	}
	return nil
}

// live returns a non-terminal record.
func (s *jobStore) live(id string) (*record, error) {
	r, ok := s.jobs[id]
	if !ok {
		return nil, fmt.Errorf("job %s: %w", id, messages.ErrJobNotFound)
	}
	if r.snap.State.IsTerminal() {
		return nil, fmt.Errorf("job %s: %w", id, messages.ErrJobTerminal)
	}
	return r, nil
}
