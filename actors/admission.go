package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"

	"github.com/rmsd/rmsd/messages"
)

func refuse(reason error, code messages.JobError, msg string) *messages.RefusedError {
	return &messages.RefusedError{Reason: reason, Code: code, Message: msg}
}

func shuttingDownRefusal() *messages.RefusedError {
	return refuse(messages.ErrShuttingDown, messages.ErrorInternal, "server is shutting down; new jobs are not accepted")
}

func parentRefusal(parent string) *messages.RefusedError {
	return refuse(messages.ErrParentUnavailable, messages.ErrorInternal,
		fmt.Sprintf("parent job %s is missing, terminal, or already a child", parent))
}

func busyRefusal(k nodeKey, holder string) *messages.RefusedError {
	return refuse(messages.ErrNodeBusy, messages.ErrorUpdateInProgress,
		fmt.Sprintf("job already in progress for rack %s node %s (job_id %s)", k.rack, k.node, holder))
}

func capacityRefusal(current, limit int) *messages.RefusedError {
	return refuse(messages.ErrAtCapacity, messages.ErrorInternal,
		fmt.Sprintf("job tracker at capacity (%d/%d jobs); retry after in-flight jobs finish", current, limit))
}

func duplicateTargetRefusal(k nodeKey) *messages.RefusedError {
	return refuse(messages.ErrDuplicateTarget, messages.ErrorInvalidArgument,
		fmt.Sprintf("duplicate target rack_id/node_id: %s/%s", k.rack, k.node))
}

// admit runs the admission checks in their contractual order: shutdown,
// parent, node busy, capacity. Only the capacity check may prune (expired
// terminal jobs, and only when the index is full).
func (r *registry) admit(ctx actor.Context, spec *messages.JobSpec) *messages.RefusedError {
	s := r.store
	if s.shuttingDown {
		return shuttingDownRefusal()
	}
	if spec.ParentID != "" {
		p, ok := s.jobs[spec.ParentID]
		if !ok || p.snap.State.IsTerminal() || p.snap.ParentID != "" {
			return parentRefusal(spec.ParentID)
		}
	}
	if spec.NodeID != "" && !spec.AllowBusyNode {
		k := nodeKey{spec.RackID, spec.NodeID}
		if holder, busy := s.busy(k); busy {
			return busyRefusal(k, holder)
		}
	}
	if len(s.jobs) >= r.core.maxJobs {
		r.applyAll(ctx, s.expiredEvictions(r.core.now(), r.core.ttl))
		if n := len(s.jobs); n >= r.core.maxJobs {
			return capacityRefusal(n, r.core.maxJobs)
		}
	}
	return nil
}

// insert records an admitted job: created, node locked, attached to parent.
func (r *registry) insert(ctx actor.Context, spec *messages.JobSpec, state messages.JobState, leaf bool) *record {
	now := r.core.now()
	desc := spec.Description
	if desc == "" {
		desc = "Queued"
	}
	evs := []messages.Event{messages.JobCreated{
		ID: spec.ID, ParentID: spec.ParentID, Type: spec.Type, RackID: spec.RackID,
		NodeID: spec.NodeID, State: state, Description: desc, At: now,
	}}
	if spec.NodeID != "" {
		evs = append(evs, messages.NodeLocked{RackID: spec.RackID, NodeID: spec.NodeID, JobID: spec.ID})
	}
	if spec.ParentID != "" {
		evs = append(evs, messages.ChildAttached{ParentID: spec.ParentID, ChildID: spec.ID, At: now})
	}
	r.applyAll(ctx, evs)
	rec := r.store.jobs[spec.ID]
	rec.leaf = leaf
	parent := spec.ParentID
	if parent == "" {
		parent = "None"
	}
	r.core.log.Info().Str("job_id", spec.ID).Str("parent_job_id", parent).Str("rack_id", spec.RackID).
		Str("node_id", spec.NodeID).Str("description", desc).Msg("job created")
	return rec
}

// createJob admits one leaf. The reply is sent as soon as the admission is
// recorded; the job's actors are spawned right after, in the same message,
// so nothing can observe the job between the two.
func (r *registry) createJob(ctx actor.Context, m *messages.CreateJob) {
	rec, reply := r.admitJob(ctx, m)
	ctx.Respond(reply)
	if rec == nil {
		return
	}
	r.startLeaf(ctx, rec)
	if p := rec.snap.ParentID; p != "" {
		r.childJoined(ctx, r.store.jobs[p], rec.snap.ID)
	}
}

func (r *registry) admitJob(ctx actor.Context, m *messages.CreateJob) (*record, *messages.CreateJobReply) {
	spec := m.Spec
	if spec.ID == "" {
		spec.ID = uuid.NewString()
	}
	if rec, ok := r.store.jobs[spec.ID]; ok { // a retried create: answer it again
		return nil, &messages.CreateJobReply{Job: rec.snapshot()}
	}
	if m.Workflow == nil {
		return nil, &messages.CreateJobReply{Err: fmt.Errorf("create job %s: workflow is required: %w", spec.ID, messages.ErrInvalidSpec)}
	}
	if ref := r.admit(ctx, &spec); ref != nil {
		return nil, &messages.CreateJobReply{Err: ref}
	}
	rec := r.insert(ctx, &spec, messages.StateQueued, true)
	rec.wf, rec.cleanup = m.Workflow, m.Cleanup
	return rec, &messages.CreateJobReply{Job: rec.snapshot()}
}

// createBatch admits a parent and its children, answers, then starts the
// children (all records exist before any child work starts).
func (r *registry) createBatch(ctx actor.Context, m *messages.CreateBatch) {
	parent, admitted, reply := r.admitBatch(ctx, m)
	ctx.Respond(reply)
	for _, rec := range admitted {
		r.startLeaf(ctx, rec)
	}
	if len(admitted) > 0 {
		r.spawnBatch(ctx, parent)
	}
}

func (r *registry) admitBatch(ctx actor.Context, m *messages.CreateBatch) (*record, []*record, *messages.CreateBatchReply) {
	spec := m.Parent
	if spec.ID == "" {
		spec.ID = uuid.NewString()
	}
	if rec, ok := r.store.jobs[spec.ID]; ok { // a retried batch: answer it again
		return nil, nil, r.batchReply(rec)
	}
	if spec.NodeID != "" || spec.ParentID != "" {
		return nil, nil, &messages.CreateBatchReply{Err: fmt.Errorf("create batch %s: a parent has no node and no parent: %w", spec.ID, messages.ErrInvalidSpec)}
	}
	for i, t := range m.Children {
		if t.Workflow == nil {
			return nil, nil, &messages.CreateBatchReply{Err: fmt.Errorf("create batch %s: target %d: workflow is required: %w", spec.ID, i, messages.ErrInvalidSpec)}
		}
	}
	if ref := r.admit(ctx, &spec); ref != nil {
		return nil, nil, &messages.CreateBatchReply{Err: ref}
	}
	if spec.Description == "" {
		spec.Description = fmt.Sprintf("Batch %s in progress", spec.Type.BatchNoun())
	}
	parent := r.insert(ctx, &spec, messages.StateRunning, false)
	seen := make(map[nodeKey]struct{}, len(m.Children))
	admitted := make([]*record, 0, len(m.Children))
	for _, t := range m.Children {
		k := nodeKey{t.RackID, t.NodeID}
		if _, dup := seen[k]; dup {
			ref := duplicateTargetRefusal(k)
			r.core.log.Warn().Str("job_id", spec.ID).Str("rack_id", k.rack).Str("node_id", k.node).Msg("batch job rejected: duplicate target")
			parent.rejected = append(parent.rejected, messages.RejectedTarget{RackID: k.rack, NodeID: k.node, Code: ref.Code, Message: ref.Message})
			continue
		}
		seen[k] = struct{}{}
		child := messages.JobSpec{ID: uuid.NewString(), ParentID: spec.ID, RackID: t.RackID, NodeID: t.NodeID, Description: t.Description}
		if ref := r.admit(ctx, &child); ref != nil {
			r.core.log.Warn().Str("job_id", spec.ID).Str("rack_id", k.rack).Str("node_id", k.node).Str("reason", ref.Message).Msg("batch job rejected")
			parent.rejected = append(parent.rejected, messages.RejectedTarget{RackID: k.rack, NodeID: k.node, Code: ref.Code, Message: ref.Message})
			continue
		}
		rec := r.insert(ctx, &child, messages.StateQueued, true)
		rec.wf = t.Workflow
		admitted = append(admitted, rec)
	}
	return parent, admitted, r.batchReply(parent)
}

func (r *registry) batchReply(parent *record) *messages.CreateBatchReply {
	out := &messages.CreateBatchReply{Parent: parent.snapshot(), Rejected: append([]messages.RejectedTarget(nil), parent.rejected...)}
	for _, id := range parent.snap.ChildIDs {
		if c, ok := r.store.jobs[id]; ok {
			out.Admitted = append(out.Admitted, c.snapshot())
		}
	}
	return out
}

// childJoined tells a parent's batch actor about a new child, spawning the
// actor when the job just became a parent.
func (r *registry) childJoined(ctx actor.Context, parent *record, childID string) {
	if parent.batch == nil {
		r.spawnBatch(ctx, parent)
		return
	}
	ctx.Send(parent.batch, &childAdded{id: childID})
}
