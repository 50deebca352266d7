package actors

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// reconcile repairs what a registry turn that panicked half-way may have
// left: a seal applies a job's terminal events first and then performs
// their consequences (its lock actors stopped, its parent told, its
// waiters answered), and a panic between the two leaves the store saying
// one thing and the actors another. The next registry instance runs this
// before its usual rebuild, so that after it:
//
//   - no terminal job holds a node, and a terminal coordinator's
//     reservation children are released, unless the workflow that acted
//     on them still runs (then they stay held until it returns);
//   - no lock actor serves a lease that no longer exists;
//   - no batch actor belongs to a terminal parent, and every open parent's
//     batch actor is replaced by one handed every child already terminal
//     (the old one may have missed one), which settles the parent if all
//     are;
//   - every waiter whose jobs have all ended is answered.
//
// Each step only finishes consequences the store already implies, so
// running it after a turn that had changed nothing changes nothing.
func (r *registry) reconcile(ctx actor.Context) {
	s := r.store
	r.core.log.Warn().Msg("job registry restarted after a crash; reconciling its actors with its state")
	r.releaseReservationsOfEnded(ctx)
	var evs []messages.Event
	for _, l := range s.leases {
		if !l.isJob() {
			continue
		}
		rec, ok := s.jobs[l.holder]
		if ok && !rec.snap.State.IsTerminal() {
			continue
		}
		if ok && r.keepsForWorkflow(rec) {
			continue // its workflow still runs: held until it returns
		}
		evs = append(evs, messages.NodeReleased{RackID: l.key.rack, NodeID: l.key.node, Holder: l.holder})
	}
	r.applyAll(ctx, evs)
	for id, ref := range s.pidRefs {
		if ref.kind != kindLock {
			continue
		}
		if l, ok := s.leases[ref.key]; !ok || l.lock == nil || l.lock.Id != id {
			pid := s.pids[id]
			r.forget(pid)
			ctx.Stop(pid)
		}
	}
	for _, rec := range s.jobs {
		if rec.batch == nil {
			continue
		}
		// A terminal parent's actor is done; an open one's is replaced by
		// rebuild, which hands the new one every terminal child.
		r.forget(rec.batch)
		ctx.Stop(rec.batch)
		rec.batch = nil
	}
	var ended []string
	for id := range s.waiters {
		if rec, ok := s.jobs[id]; !ok || rec.snap.State.IsTerminal() {
			ended = append(ended, id)
		}
	}
	slices.Sort(ended)
	for _, id := range ended {
		r.settleWaiters(ctx, id)
	}
}

// releaseReservationsOfEnded completes the reservation children a
// terminal coordinator left open.
func (r *registry) releaseReservationsOfEnded(ctx actor.Context) {
	for _, rec := range r.store.jobs {
		if !rec.reservation || rec.snap.State.IsTerminal() {
			continue
		}
		if p, ok := r.store.jobs[rec.snap.ParentID]; !ok || p.snap.State.IsTerminal() {
			t := messages.TypeNone
			if ok {
				t = p.snap.Type
			}
			r.sealHolding(ctx, rec, reservationReleased(t), ok && r.keepsForWorkflow(p))
		}
	}
}

// keepsForWorkflow reports whether a terminal job's holds (a reservation
// child's: its coordinator's) must stay because the workflow that acted
// on them has not returned; a seal the crash cut short before it started
// the wait for that return gets it started here.
func (r *registry) keepsForWorkflow(rec *record) bool {
	coord := rec
	if rec.reservation {
		p, ok := r.store.jobs[rec.snap.ParentID]
		if !ok {
			return false
		}
		coord = p
	}
	if !coord.leaf || !r.core.workflows.running(coord.snap.ID) {
		return false
	}
	if !coord.ret.awaiting && coord.snap.State.IsTerminal() {
		r.core.workflows.await(coord.snap.ID)
		r.awaitReturn(coord)
	}
	return true
}
