package clusterparent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// RackBatch is what a rack's owner answered for the rack's batch of a
// cluster parent: the batch's snapshot followed by its children's, or
// the error of the read (messages.ErrJobNotFound when the owner no
// longer knows the batch).
type RackBatch struct {
	Jobs []messages.JobSnapshot
	Err  error
}

// Aggregate is the status of the cluster parent p: its snapshot followed
// by every node's child, rack by rack. batches holds one read per rack of
// p.Racks, in that order (a rack without a job is not read: its entry is
// ignored). The parent is aggregated from the children by the registry's
// own rule (actors.AggregateBatch); a rack's batch that is gone
// (retention) counts as missing; a parent none of whose racks started a
// child is Failed, naming each rack's reason. The first read error other
// than a batch that is gone is returned as it is.
func Aggregate(p store.ClusterParent, batches []RackBatch) ([]messages.JobSnapshot, error) {
	if len(batches) != len(p.Racks) {
		return nil, fmt.Errorf("cluster parent %s: %d rack reads for %d racks", p.ID, len(batches), len(p.Racks))
	}
	t := jobTypeNamed(p.Type)
	parent := messages.JobSnapshot{ID: p.ID, Type: t, CreatedAt: p.CreatedAt, UpdatedAt: p.CreatedAt}
	var children []messages.JobSnapshot
	var notStarted []string
	missing := 0
	for i, rk := range p.Racks {
		b := batches[i]
		switch {
		case rk.JobID == "":
			notStarted = append(notStarted, "rack "+rk.RackID+": "+rk.Failure)
			continue
		case errors.Is(b.Err, messages.ErrJobNotFound) || b.Err == nil && len(b.Jobs) == 0:
			missing++ // the rack's batch is gone (retention)
			continue
		case b.Err != nil:
			return nil, b.Err
		}
		rackBatch := b.Jobs[0]
		if rackBatch.UpdatedAt.After(parent.UpdatedAt) {
			parent.UpdatedAt = rackBatch.UpdatedAt
		}
		if len(b.Jobs) == 1 && rackBatch.IsTerminal() {
			notStarted = append(notStarted, "rack "+rk.RackID+": "+rackBatch.ErrorMessage)
		}
		children = append(children, b.Jobs[1:]...)
	}
	if len(children) == 0 && missing == 0 {
		out := messages.Failed(messages.NewFailure(messages.ErrorInvalidArgument,
			fmt.Sprintf("No %s was started: %s", t.BatchNoun(), strings.Join(notStarted, "; "))))
		parent.State, parent.Description, parent.ErrorCode, parent.ErrorMessage, parent.ResultJSON =
			out.State, out.Description, out.Code, out.Message, out.ResultJSON
		return []messages.JobSnapshot{parent}, nil
	}
	parent = actors.AggregateBatch(parent, t, children, missing)
	parent.ChildIDs = make([]string, len(children))
	for i, c := range children {
		parent.ChildIDs[i] = c.ID
	}
	return append([]messages.JobSnapshot{parent}, children...), nil
}

// jobTypeNamed is the job type whose span name is name (TypeNone when
// none is).
func jobTypeNamed(name string) messages.JobType {
	for t := messages.TypeNone; t <= messages.TypeSystemValidation; t++ {
		if t.String() == name {
			return t
		}
	}
	return messages.TypeNone
}
