package sitejobs

import (
	"time"

	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/messages"
)

// The wire forms of the engine's snapshots, holds and changes.

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func jobRecord(s *messages.JobSnapshot) *rackpb.JobRecord {
	return &rackpb.JobRecord{
		Id: s.ID, ParentId: s.ParentID, ChildIds: s.ChildIDs, Type: int32(s.Type), State: int32(s.State),
		Description: s.Description, RackId: s.RackID, NodeId: s.NodeID, ErrorCode: int32(s.ErrorCode),
		ErrorMessage: s.ErrorMessage, ResultJson: s.ResultJSON,
		CreatedUnixNano: unixNano(s.CreatedAt), UpdatedUnixNano: unixNano(s.UpdatedAt),
	}
}

func snapshot(r *rackpb.JobRecord) messages.JobSnapshot {
	return messages.JobSnapshot{
		ID: r.GetId(), ParentID: r.GetParentId(), ChildIDs: r.GetChildIds(), Type: messages.JobType(r.GetType()),
		State: messages.JobState(r.GetState()), Description: r.GetDescription(), RackID: r.GetRackId(),
		NodeID: r.GetNodeId(), ErrorCode: messages.JobError(r.GetErrorCode()), ErrorMessage: r.GetErrorMessage(),
		ResultJSON: r.GetResultJson(), CreatedAt: fromUnixNano(r.GetCreatedUnixNano()), UpdatedAt: fromUnixNano(r.GetUpdatedUnixNano()),
	}
}

func jobRecords(snaps []messages.JobSnapshot) []*rackpb.JobRecord {
	out := make([]*rackpb.JobRecord, len(snaps))
	for i := range snaps {
		out[i] = jobRecord(&snaps[i])
	}
	return out
}

func snapshots(recs []*rackpb.JobRecord) []messages.JobSnapshot {
	out := make([]messages.JobSnapshot, len(recs))
	for i, r := range recs {
		out[i] = snapshot(r)
	}
	return out
}

func holdRecord(h messages.Hold) *rackpb.HoldRecord {
	return &rackpb.HoldRecord{RackId: h.RackID, NodeId: h.NodeID, Holder: h.Holder, Job: h.Job, Operation: h.Operation,
		SinceUnixNano: unixNano(h.Since), Held: true}
}

func hold(r *rackpb.HoldRecord) messages.Hold {
	return messages.Hold{RackID: r.GetRackId(), NodeID: r.GetNodeId(), Holder: r.GetHolder(), Job: r.GetJob(),
		Operation: r.GetOperation(), Since: fromUnixNano(r.GetSinceUnixNano())}
}

func changeRecord(c messages.JobChange) *rackpb.JobChangeRecord {
	out := &rackpb.JobChangeRecord{Evicted: c.Evicted}
	if c.Job != nil {
		out.Job = jobRecord(c.Job)
	}
	if h := c.Hold; h != nil {
		out.Hold = &rackpb.HoldRecord{RackId: h.RackID, NodeId: h.NodeID, Holder: h.Holder, Job: h.Job, Operation: h.Operation, Held: h.Held}
	}
	return out
}

func change(r *rackpb.JobChangeRecord) messages.JobChange {
	out := messages.JobChange{Evicted: r.GetEvicted()}
	if r.GetJob() != nil {
		s := snapshot(r.GetJob())
		out.Job = &s
	}
	if h := r.GetHold(); h != nil {
		out.Hold = &messages.HoldChange{RackID: h.GetRackId(), NodeID: h.GetNodeId(), Holder: h.GetHolder(), Job: h.GetJob(),
			Operation: h.GetOperation(), Held: h.GetHeld()}
	}
	return out
}
