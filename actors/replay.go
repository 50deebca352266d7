package actors

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// replayTimeout bounds reading the journal at start.
const replayTimeout = 5 * time.Minute

// replayPage is how many journal rows one read returns.
const replayPage = 256

// replayStats describe a replayed journal.
type replayStats struct {
	rows, events, skipped int
}

// replayJournal rebuilds s from the journal: every event applied in order,
// exactly as the registry applied it. The jobs that were not terminal are
// left for the registry's first turn to interrupt (recoverInterrupted).
func replayJournal(j store.Journal, s *jobStore) (replayStats, error) {
	ctx, cancel := context.WithTimeout(context.Background(), replayTimeout)
	defer cancel()
	var st replayStats
	var after int64
	for {
		rows, err := j.ReadEvents(ctx, after, replayPage)
		if err != nil {
			return st, fmt.Errorf("read the job journal after row %d: %w", after, err)
		}
		if len(rows) == 0 {
			break
		}
		for _, row := range rows {
			evs, err := decodeRow(row)
			if err != nil {
				return st, fmt.Errorf("%w: %w", errJournal, err)
			}
			for _, ev := range evs {
				if err := s.apply(ev); err != nil {
					st.skipped++ // applied once before it was journaled: a bug, not data
					continue
				}
				st.skipped += len(s.expandImplied(ev))
			}
			st.rows++
			st.events += len(evs)
			after = row.Seq
		}
	}
	s.replayed = true
	return st, nil
}

// interruptedMessage is the error message of a job a restart interrupted.
func interruptedMessage(stage string) string {
	return fmt.Sprintf("interrupted by restart of rmsd at stage %q; the state of the hardware is unknown", stage)
}

// settleReplayedParents seals, in this turn, every batch parent whose
// children are all terminal now, with the verdict its batch actor would
// give: a read right after the start sees it re-aggregated.
func (r *registry) settleReplayedParents(ctx actor.Context) {
	var ids []string
	for id := range r.store.openParents {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		p, ok := r.store.jobs[id]
		if !ok || p.snap.State.IsTerminal() || !p.isBatch() || p.counts.done() != p.counts.total() {
			continue
		}
		b := &batchActor{parentID: id, typ: p.snap.Type}
		for _, cid := range p.snap.ChildIDs {
			if c, ok := r.store.jobs[cid]; ok && !c.reservation && c.snap.State.IsTerminal() {
				b.add(c.index, &c.snap)
			}
		}
		r.seal(ctx, p, b.outcome(p.counts))
	}
}

// recoverInterrupted runs in the first turn after a replay: every job that
// was Queued or Running when rmsd stopped is sealed Failed (Internal),
// saying at which stage; its holds are released with it. A batch parent is
// not interrupted itself: it is re-aggregated from its (now terminal)
// children in the same turn (settleReplayedParents). The nodes that were
// mid-operation are logged, for an operator to check.
func (r *registry) recoverInterrupted(ctx actor.Context) {
	s := r.store
	var ids, nodes []string
	for id, rec := range s.jobs {
		if rec.snap.State.IsTerminal() {
			continue
		}
		if rec.snap.NodeID != "" {
			nodes = append(nodes, rec.snap.RackID+"/"+rec.snap.NodeID)
		}
		if rec.isBatch() {
			continue
		}
		if p, ok := s.jobs[rec.snap.ParentID]; ok && rec.reservation && !p.snap.State.IsTerminal() {
			continue // released with its parent
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	slices.Sort(nodes)
	for _, id := range ids {
		rec := s.jobs[id]
		if rec.snap.State.IsTerminal() {
			continue
		}
		stage := rec.snap.Description
		if !rec.reservation {
			r.core.log.Warn().Str("job_id", id).Str("rack_id", rec.snap.RackID).Str("node_id", rec.snap.NodeID).
				Str("stage", stage).Msg("job interrupted by restart of rmsd")
		}
		f := messages.NewFailure(messages.ErrorInternal, r.core.interrupted(stage))
		f.Description = "Interrupted"
		r.seal(ctx, rec, messages.Failed(f))
	}
	r.settleReplayedParents(ctx)
	if len(ids) > 0 {
		r.core.log.Warn().Int("jobs", len(ids)).Strs("nodes", nodes).
			Msg("jobs interrupted by restart of rmsd; the state of these nodes is unknown: check them")
	}
}
