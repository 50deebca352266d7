package actors

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// The registry's side of the journal (journal.go): which events are
// durable, which replies wait for them, and when the journal is compacted.

// compactSlack is how many events the journal's tail may hold beyond four
// per tracked job before the registry writes a snapshot: the journal then
// holds at most one snapshot (a record per job, a row per hold) and that
// tail, so its size follows max_tracked_jobs, not uptime.
const compactSlack = 4096

// journaled reports whether ev changes the durable part of the index and
// must be written. It is asked before ev is applied. Operation leases and
// shutdown belong to one process's life and are not journaled; events
// other events imply are left to replay to derive (expandImplied).
func (s *jobStore) journaled(ev messages.Event) bool {
	switch e := ev.(type) {
	case messages.ShutdownBegun:
		return false
	case messages.NodeLocked:
		return e.Operation == "" && !s.ownNodeLock(e)
	case messages.NodeReleased, messages.ChildAttached:
		return false // a job's release and attachment are implied; operations' are not kept
	}
	return true
}

// noteSeq records on the records an event touches the journal sequence a
// reply about them must wait for: its subject, and the subject's parent,
// whose snapshot shows its children (their list, counts and progress).
// (An evicted child is gone by now; a parent's count of missing children
// may show its eviction before it is durable, which a restart's reaper
// redoes.)
func (s *jobStore) noteSeq(ev messages.Event, seq uint64) {
	r, ok := s.jobs[ev.Subject()]
	if !ok {
		return
	}
	r.seq = seq
	if p, ok := s.jobs[r.snap.ParentID]; ok {
		p.seq = seq
	}
}

// lastSeq is the sequence of the last journaled event (0 without a
// journal).
func (r *registry) lastSeq() uint64 {
	if r.core.journal == nil {
		return 0
	}
	return r.core.journal.last() + uint64(len(r.store.unwritten))
}

// flushJournal hands the turn's durable events to the journal writer, in
// the order they were applied; the registry is the writer's only source,
// so they get exactly the sequences lastSeq promised. It runs at the end
// of every turn, a crashed one included (the events are applied).
func (r *registry) flushJournal() {
	if len(r.store.unwritten) == 0 {
		return
	}
	r.core.journal.add(r.store.unwritten)
	r.store.unwritten = nil
}

// jobSeq is the journal sequence a reply about job id waits for (0: none).
func (r *registry) jobSeq(id string) uint64 {
	if rec, ok := r.store.jobs[id]; ok {
		return rec.seq
	}
	return 0
}

// respond answers the current request once the journal holds every event
// up to seq. failed, when set, is the answer should the store fail first
// (the admitted jobs, gated, then end without running: see startLeaf).
func (r *registry) respond(ctx actor.Context, msg any, seq uint64, failed any) {
	r.sendDurable(ctx, ctx.Sender(), msg, seq, failed)
}

// sendDurable sends msg to to once the journal holds every event up to seq.
func (r *registry) sendDurable(ctx actor.Context, to *actor.PID, msg any, seq uint64, failed any) {
	if to == nil {
		return // nobody asked (a Send, not a Request)
	}
	j := r.core.journal
	if j == nil || seq == 0 {
		ctx.Send(to, msg)
		return
	}
	j.reply(deferredReply{seq: seq, to: to, msg: msg, failed: failed})
}

// storeUnavailable reports whether new jobs must be refused because the
// journal cannot be written (or the engine was abandoned).
func (r *registry) storeUnavailable() bool {
	return r.core.abandoned.Load() != nil || r.core.journal != nil && r.core.journal.unavailable()
}

// storeDown is the refusal of an admission while storeUnavailable: the
// abandonment's once the engine is abandoned.
func (r *registry) storeDown() error {
	if a := r.core.abandoned.Load(); a != nil {
		return a.refusal
	}
	return errStoreDown
}

// maybeCompact queues a snapshot of the index when the journal's tail has
// grown past four events per tracked job (plus compactSlack).
func (r *registry) maybeCompact() {
	j := r.core.journal
	if j == nil || j.tailLen()+len(r.store.unwritten) <= 4*len(r.store.jobs)+compactSlack {
		return
	}
	r.flushJournal()
	j.addSnapshot(r.store.snapshotEvents())
}

// snapshotEvents returns the events that rebuild the durable index: every
// job as it is (by id), then every hold of a job (in map order: holds do
// not depend on each other).
func (s *jobStore) snapshotEvents() []messages.Event {
	ids := make([]string, 0, len(s.jobs))
	for id := range s.jobs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	evs := make([]messages.Event, 0, len(ids)+len(s.leases))
	for _, id := range ids {
		rec := s.jobs[id]
		snap := rec.snap
		n := len(snap.ChildIDs)
		snap.ChildIDs = snap.ChildIDs[:n:n]
		c := rec.counts
		evs = append(evs, messages.JobRestored{Job: snap, Reservation: rec.reservation, Index: rec.index,
			Counts: messages.ChildCounts{Queued: c.queued, Running: c.running, Completed: c.completed, Failed: c.failed, Missing: c.missing}})
	}
	for _, l := range s.leases {
		// A terminal job's holds wait only for its workflow's return; a
		// restart runs no workflow, so they are not kept.
		if rec, ok := s.jobs[l.holder]; l.isJob() && ok && !rec.snap.State.IsTerminal() {
			evs = append(evs, messages.NodeLocked{RackID: l.key.rack, NodeID: l.key.node, Holder: l.holder, Since: l.since, Devices: l.devices})
		}
	}
	return evs
}

// restore applies a messages.JobRestored.
func (s *jobStore) restore(e messages.JobRestored) error {
	if _, ok := s.jobs[e.Job.ID]; ok {
		return messages.ErrDuplicateJob
	}
	c := e.Counts
	rec := &record{snap: e.Job, reservation: e.Reservation, index: e.Index,
		counts: childCounts{queued: c.Queued, running: c.Running, completed: c.Completed, failed: c.Failed, missing: c.Missing}}
	s.jobs[e.Job.ID] = rec
	s.enterFlight(rec)
	s.terminal.unsorted = true
	if !rec.snap.State.IsTerminal() && rec.counts.total() > 0 {
		s.openParents[e.Job.ID] = struct{}{}
	}
	return nil
}
