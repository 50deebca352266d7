package actors

import (
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// batchActor is the BatchParent actor of one open batch parent. The
// registry counts the parent's children by state; this actor owns what the
// counts cannot say: which children were already up to date and the
// failure entry of every failed child, each built once when the child is
// sealed (its result document parsed then, off the registry's turn). When
// the registry reports the last child terminal, the actor computes the
// parent's outcome and hands it back. The registry respawns it with the
// terminal children so far if it dies early.
type batchActor struct {
	registry *actor.PID
	parentID string
	typ      messages.JobType
	skipped  int
	failed   []failedEntry
	verdict  *parentSettled // sent; offered again after a registry restart
}

// Receive implements actor.Actor.
func (b *batchActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *childFinished:
		b.add(m.index, &m.snap)
	case *settleBatch:
		b.verdict = &parentSettled{id: b.parentID, outcome: b.outcome(m.counts)}
		ctx.Send(b.registry, b.verdict)
	case *resync:
		b.registry = m.registry
		if b.verdict != nil {
			ctx.Send(b.registry, b.verdict)
		}
	default:
		crashIfAsked(m)
	}
}

// outcome is the parent's verdict once its children are counted.
func (b *batchActor) outcome(counts childCounts) messages.Outcome {
	failed := slices.Clone(b.failed)
	slices.SortFunc(failed, func(x, y failedEntry) int { return x.index - y.index })
	return verdict(b.typ, counts, b.skipped, failed)
}

// add records one terminal child.
func (b *batchActor) add(index int, s *messages.JobSnapshot) {
	switch s.State {
	case messages.StateCompleted:
		if alreadyUpToDate(s.ResultJSON) {
			b.skipped++
		}
	case messages.StateFailed:
		b.failed = append(b.failed, newFailedEntry(b.typ, index, s))
	}
}
