package actors

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/rmsd/rmsd/messages"
)

// errBadEvent marks an event that does not fit the current state.
var errBadEvent = errors.New("jobs: event does not apply")

// apply is the one function that changes a jobStore's index. It is
// deterministic: the result depends only on the store and the event (times
// travel inside the events), so replaying a journal of events rebuilds the
// same index, parents' child counts included. An event that does not fit
// (unknown job, terminal overwrite, a hold on a held node) changes nothing
// and returns an error.
func (s *jobStore) apply(ev messages.Event) error {
	switch e := ev.(type) {
	case messages.JobCreated:
		if _, ok := s.jobs[e.ID]; ok {
			return fmt.Errorf("create %s: %w", e.ID, messages.ErrDuplicateJob)
		}
		s.jobs[e.ID] = &record{reservation: e.Reservation, snap: messages.JobSnapshot{
			ID: e.ID, ParentID: e.ParentID, Type: e.Type, State: e.State,
			Description: e.Description, RackID: e.RackID, NodeID: e.NodeID,
			CreatedAt: e.At, UpdatedAt: e.At,
		}}
		s.enterFlight(s.jobs[e.ID])
	case messages.ChildAttached:
		return s.attach(e)
	case messages.JobStarted:
		r, err := s.live(e.ID)
		if err != nil {
			return err
		}
		if r.snap.State != messages.StateQueued {
			return fmt.Errorf("start %s from %s: %w", e.ID, r.snap.State, errBadEvent)
		}
		s.moveChild(r, messages.StateRunning, e.At)
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
		s.moveChild(r, messages.StateCompleted, e.At)
		s.leaveFlight(r, true)
		r.snap.State, r.snap.Description, r.snap.ResultJSON, r.snap.UpdatedAt =
			messages.StateCompleted, e.Description, e.ResultJSON, e.At
		delete(s.openParents, e.ID)
	case messages.JobFailed:
		r, err := s.live(e.ID)
		if err != nil {
			return err
		}
		s.moveChild(r, messages.StateFailed, e.At)
		s.leaveFlight(r, true)
		r.snap.State, r.snap.Description, r.snap.UpdatedAt = messages.StateFailed, e.Description, e.At
		r.snap.ErrorCode, r.snap.ErrorMessage, r.snap.ResultJSON = e.Code, e.Message, e.ResultJSON
		delete(s.openParents, e.ID)
	case messages.NodeLocked:
		return s.lock(e)
	case messages.NodeReleased:
		k := lockKey{e.RackID, e.NodeID}
		l, ok := s.leases[k]
		if !ok || l.holder != e.Holder {
			return fmt.Errorf("release %s/%s for %s: %w", e.RackID, e.NodeID, e.Holder, errBadEvent)
		}
		delete(s.leases, k)
		s.unindex(l)
		if r, ok := s.jobs[e.Holder]; ok && l.isJob() {
			r.holds = slices.DeleteFunc(r.holds, func(h lockKey) bool { return h == k })
		} else if op, ok := s.ops[e.Holder]; ok {
			op.keys = slices.DeleteFunc(op.keys, func(h lockKey) bool { return h == k })
		}
	case messages.JobEvicted:
		r, ok := s.jobs[e.ID]
		if !ok {
			return fmt.Errorf("evict %s: %w", e.ID, messages.ErrJobNotFound)
		}
		s.moveChild(r, messages.StateUnspecified, time.Time{}) // a parent counts it missing
		delete(s.jobs, e.ID)
		delete(s.openParents, e.ID)
		s.leaveFlight(r, false)
	case messages.JobRestored:
		if err := s.restore(e); err != nil {
			return fmt.Errorf("restore %s: %w", e.Job.ID, err)
		}
	case messages.ShutdownBegun:
		s.shuttingDown = true
	default:
		return fmt.Errorf("event %T: %w", ev, errBadEvent)
	}
	return nil
}

func (s *jobStore) attach(e messages.ChildAttached) error {
	p, ok := s.jobs[e.ParentID]
	if !ok || p.snap.State.IsTerminal() || p.snap.ParentID != "" {
		return fmt.Errorf("attach %s to %s: %w", e.ChildID, e.ParentID, errBadEvent)
	}
	c, ok := s.jobs[e.ChildID]
	if !ok {
		return fmt.Errorf("attach %s: %w", e.ChildID, messages.ErrJobNotFound)
	}
	c.index = len(p.snap.ChildIDs)
	p.snap.ChildIDs = append(p.snap.ChildIDs, e.ChildID)
	p.snap.UpdatedAt = e.At
	if !c.reservation {
		p.counts.add(c.snap.State, 1)
		s.openParents[e.ParentID] = struct{}{}
	}
	return nil
}

// moveChild moves a batch child between its parent's counts: from its
// current state to to (StateUnspecified: gone, counted missing). An open
// parent's update time follows its children.
func (s *jobStore) moveChild(c *record, to messages.JobState, at time.Time) {
	if c.snap.ParentID == "" || c.reservation {
		return
	}
	p, ok := s.jobs[c.snap.ParentID]
	if !ok || c.index >= len(p.snap.ChildIDs) || p.snap.ChildIDs[c.index] != c.snap.ID {
		return
	}
	p.counts.add(c.snap.State, -1)
	if to == messages.StateUnspecified {
		p.counts.missing++
		return
	}
	p.counts.add(to, 1)
	if !p.snap.State.IsTerminal() && at.After(p.snap.UpdatedAt) {
		p.snap.UpdatedAt = at
	}
}

func (s *jobStore) lock(e messages.NodeLocked) error {
	k := lockKey{e.RackID, e.NodeID}
	if l, held := s.leases[k]; held {
		return fmt.Errorf("lock %s/%s for %s: held by %s: %w", e.RackID, e.NodeID, e.Holder, l.holder, errBadEvent)
	}
	l := &lease{key: k, holder: e.Holder, operation: e.Operation, since: e.Since, expires: e.Expires, devices: e.Devices}
	if l.isJob() {
		r, ok := s.jobs[e.Holder]
		if !ok || r.snap.State.IsTerminal() {
			return fmt.Errorf("lock %s/%s for %s: %w", e.RackID, e.NodeID, e.Holder, messages.ErrJobNotFound)
		}
		r.holds = append(r.holds, k)
	} else {
		op := s.ops[e.Holder]
		if op == nil {
			op = &opLease{}
			s.ops[e.Holder] = op
		}
		op.keys = append(op.keys, k)
	}
	s.leases[k] = l
	s.index(l)
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
