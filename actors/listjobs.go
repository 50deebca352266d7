package actors

import (
	"context"
	"fmt"
	"sort"

	"github.com/rmsd/rmsd/messages"
)

// List answers the jobs q selects from the registry, the one owner of job
// state: the jobs it tracks, running and finished, newest first.
func (e *Engine) List(ctx context.Context, q messages.ListJobs) (messages.ListJobsReply, error) {
	res, err := e.ask(ctx, &q)
	if err != nil {
		return messages.ListJobsReply{}, fmt.Errorf("list jobs: %w", err)
	}
	rep := res.(*messages.ListJobsReply)
	return *rep, rep.Err
}

// listJobs answers a listing, with the journal sequence the answer waits
// for (that of the newest event about any job it shows).
func (r *registry) listJobs(q *messages.ListJobs) (*messages.ListJobsReply, uint64) {
	var match []*record
	for _, rec := range r.store.jobs {
		s := &rec.snap
		switch {
		case q.State != messages.StateUnspecified && s.State != q.State,
			q.Type != "" && s.Type.String() != q.Type,
			q.RackID != "" && s.RackID != q.RackID,
			q.TopLevel && s.ParentID != "",
			!q.Since.IsZero() && s.CreatedAt.Before(q.Since),
			!q.After.IsZero() && !q.After.Before(s.CreatedAt, s.ID):
			continue
		}
		match = append(match, rec)
	}
	sort.Slice(match, func(i, j int) bool {
		a, b := &match[i].snap, &match[j].snap
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID > b.ID
	})
	rep := &messages.ListJobsReply{}
	if q.Limit > 0 && len(match) > q.Limit {
		match = match[:q.Limit]
		last := match[len(match)-1].snap
		rep.Next = messages.JobCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
	var seq uint64
	rep.Jobs = make([]messages.JobSnapshot, 0, len(match))
	for _, rec := range match {
		rep.Jobs = append(rep.Jobs, r.store.snapshot(rec))
		seq = max(seq, rec.seq)
	}
	return rep, seq
}
