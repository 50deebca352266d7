package actors

import (
	"github.com/rmsd/rmsd/messages"
)

// AggregateBatch is the status a batch parent of type t shows for its
// children (their latest snapshots, in attach order) and missing more
// children that are gone: exactly what the registry shows for a batch
// parent of its own, Running with the progress description while any
// child is open, and the batch verdict (state, description, error and
// failure document) once every child is terminal or gone. It is for a
// parent whose children live in other engines (a cluster parent over
// racks owned by several members); parent gives the fields the children
// do not (id, rack, times), and its state and outcome fields are
// replaced. Reservation children must not be passed.
func AggregateBatch(parent messages.JobSnapshot, t messages.JobType, children []messages.JobSnapshot, missing int) messages.JobSnapshot {
	var c childCounts
	skipped := 0
	var failed []failedEntry
	for i := range children {
		k := &children[i]
		c.add(k.State, 1)
		switch k.State {
		case messages.StateCompleted:
			if alreadyUpToDate(k.ResultJSON) {
				skipped++
			}
		case messages.StateFailed:
			failed = append(failed, newFailedEntry(t, i, k))
		}
	}
	c.missing += missing
	out := parent
	out.Type = t
	out.ErrorCode, out.ErrorMessage, out.ResultJSON = messages.ErrorUnspecified, "", ""
	if c.total() == 0 || c.done() < c.total() {
		out.State = messages.StateRunning
		out.Description = progressDescription(t, c)
		return out
	}
	v := verdict(t, c, skipped, failed)
	out.State, out.Description, out.ErrorCode, out.ErrorMessage, out.ResultJSON = v.State, v.Description, v.Code, v.Message, v.ResultJSON
	return out
}
