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

func duplicateTargetRefusal(k lockKey) *messages.RefusedError {
	return refuse(messages.ErrDuplicateTarget, messages.ErrorInvalidArgument,
		fmt.Sprintf("duplicate target rack_id/node_id: %s/%s", k.rack, k.node))
}

// heldRefusal says who holds k. A node held by a job gets upstream's
// wording, which callers parse; a node held by a synchronous operation, or
// a rack, names the operation.
func (r *registry) heldRefusal(l *lease) *messages.RefusedError {
	k := l.key
	if k.node == "" {
		what := l.operation
		if l.isJob() {
			what = r.jobNoun(l.holder) + " job " + l.holder
		}
		ref := refuse(messages.ErrRackBusy, messages.ErrorUpdateInProgress,
			fmt.Sprintf("rack %s is busy: %s in progress; retry when it finishes", k.rack, what))
		if l.isJob() {
			ref.Holder = l.holder
		}
		return ref
	}
	if l.isJob() {
		ref := refuse(messages.ErrNodeBusy, messages.ErrorUpdateInProgress,
			fmt.Sprintf("job already in progress for rack %s node %s (job_id %s)", k.rack, k.node, l.holder))
		ref.Holder = l.holder
		return ref
	}
	return refuse(messages.ErrNodeBusy, messages.ErrorUpdateInProgress,
		fmt.Sprintf("%s already in progress for rack %s node %s", l.operation, k.rack, k.node))
}

// jobNoun names a job's workflow for messages ("cold reboot"); a child
// reservation is named after its parent.
func (r *registry) jobNoun(id string) string {
	rec, ok := r.store.jobs[id]
	if !ok {
		return "a"
	}
	return rec.snap.Type.BatchNoun()
}

// busy returns the refusal for a held key, or nil when it is free.
func (r *registry) busy(k lockKey) *messages.RefusedError {
	if l, held := r.store.leases[k]; held {
		return r.heldRefusal(l)
	}
	return nil
}

// admit runs the admission checks in their contractual order: shutdown,
// parent, holds (the job's node and devices, then its rack's power domain
// and its reservations; see domain.go), capacity
// for need records. Only the capacity check may prune (the oldest terminal
// jobs, and only when the index is full; see capacity.go). conflicts lists every held key
// of a reservation.
func (r *registry) admit(ctx actor.Context, spec *messages.JobSpec, res *messages.Reservation, need int) (*messages.RefusedError, []messages.RejectedTarget) {
	s := r.store
	if s.shuttingDown {
		return shuttingDownRefusal(), nil
	}
	if spec.ParentID != "" {
		p, ok := s.jobs[spec.ParentID]
		if !ok || p.snap.State.IsTerminal() || p.snap.ParentID != "" {
			return parentRefusal(spec.ParentID), nil
		}
	}
	var first *messages.RefusedError
	var conflicts []messages.RejectedTarget
	note := func(k lockKey, ref *messages.RefusedError) {
		if first == nil {
			first = ref
		}
		if res != nil {
			conflicts = append(conflicts, messages.RejectedTarget{RackID: k.rack, NodeID: k.node, Code: ref.Code, Message: ref.Message, Holder: ref.Holder})
		}
	}
	own := map[string]bool{}
	if res != nil && res.HoldRack {
		own[spec.RackID] = true
	}
	claimed := newClaims()
	if spec.NodeID != "" {
		k := lockKey{spec.RackID, spec.NodeID}
		if ref := r.nodeBusy(k, spec.Devices, own); ref != nil {
			note(k, ref)
		}
		claimed.add(k, spec.Devices)
	}
	if res != nil {
		if res.HoldRack {
			k := lockKey{spec.RackID, ""}
			if ref := r.domainBusy(spec.RackID); ref != nil {
				note(k, ref)
			}
		}
		for _, n := range res.Nodes {
			k := lockKey{n.RackID, n.NodeID}
			if n.NodeID == "" {
				note(k, refuse(messages.ErrInvalidSpec, messages.ErrorInvalidArgument,
					fmt.Sprintf("reservation of rack %s names no node", n.RackID)))
			} else if ref := claimed.conflict(k, n.Devices); ref != nil {
				note(k, ref)
			} else if ref := r.nodeBusy(k, n.Devices, own); ref != nil {
				note(k, ref)
			}
			claimed.add(k, n.Devices)
		}
	}
	if first != nil {
		return first, conflicts
	}
	if len(s.jobs)+need > r.core.maxJobs {
		evs, remain := s.capacityEvictions(need, r.core.maxJobs)
		r.applyAll(ctx, evs)
		if remain+need > r.core.maxJobs {
			return s.capacityRefusal(remain, r.core.maxJobs), nil
		}
	}
	return nil, nil
}

// insert records an admitted job: created, its node and rack held,
// attached to its parent.
func (r *registry) insert(ctx actor.Context, spec *messages.JobSpec, state messages.JobState, reservation, holdRack bool) *record {
	now := r.core.now()
	desc := spec.Description
	if desc == "" {
		desc = "Queued"
	}
	evs := []messages.Event{messages.JobCreated{
		ID: spec.ID, ParentID: spec.ParentID, Type: spec.Type, RackID: spec.RackID,
		NodeID: spec.NodeID, State: state, Description: desc, Reservation: reservation, At: now,
	}}
	// In the order replay derives the implied ones (expandImplied): the
	// job's node, its attachment, then the explicit rack hold.
	if spec.NodeID != "" {
		evs = append(evs, messages.NodeLocked{RackID: spec.RackID, NodeID: spec.NodeID, Holder: spec.ID, Since: now, Devices: spec.Devices})
	}
	if spec.ParentID != "" {
		evs = append(evs, messages.ChildAttached{ParentID: spec.ParentID, ChildID: spec.ID, At: now})
	}
	if holdRack {
		evs = append(evs, messages.NodeLocked{RackID: spec.RackID, Holder: spec.ID, Since: now})
	}
	r.applyAll(ctx, evs)
	rec := r.store.jobs[spec.ID]
	if !reservation {
		parent := spec.ParentID
		if parent == "" {
			parent = "None"
		}
		r.core.log.Info().Str("job_id", spec.ID).Str("parent_job_id", parent).Str("rack_id", spec.RackID).
			Str("node_id", spec.NodeID).Str("description", desc).Msg("job created")
	}
	return rec
}

// createJob admits one job (with its reservation, if any). The reply is
// sent as soon as the admission is recorded; the job's actors are spawned
// right after, in the same message, so nothing can observe the job between
// the two.
func (r *registry) createJob(ctx actor.Context, m *messages.CreateJob) {
	rec, kids, reply := r.admitJob(ctx, m)
	if rec == nil { // refused, or a retried create answered again
		// A retry (the facade's, after an answer lost to its timeout) may
		// come while the first admission's commit is still in flight: it
		// too hands out the id only once that commit succeeded.
		r.respond(ctx, reply, r.jobSeq(reply.Job.ID), &messages.CreateJobReply{Err: errStoreDown})
		return
	}
	r.respond(ctx, reply, r.lastSeq(), &messages.CreateJobReply{Err: errStoreDown})
	r.startLeaf(ctx, rec)
	for _, k := range kids {
		r.spawnLocksOf(ctx, k)
	}
	if p := rec.snap.ParentID; p != "" {
		r.childJoined(ctx, r.store.jobs[p], rec)
	}
}

func (r *registry) admitJob(ctx actor.Context, m *messages.CreateJob) (*record, []*record, *messages.CreateJobReply) {
	spec := m.Spec
	if spec.ID == "" {
		spec.ID = uuid.NewString()
	}
	if rec, ok := r.store.jobs[spec.ID]; ok { // a retried create: answer it again
		return nil, nil, &messages.CreateJobReply{Job: r.store.snapshot(rec)}
	}
	if r.storeUnavailable() {
		return nil, nil, &messages.CreateJobReply{Err: r.storeDown()}
	}
	if m.Workflow == nil {
		return nil, nil, &messages.CreateJobReply{Err: fmt.Errorf("create job %s: workflow is required: %w", spec.ID, messages.ErrInvalidSpec)}
	}
	res := m.Reserve
	need := 1
	if res != nil {
		if spec.ParentID != "" {
			return nil, nil, &messages.CreateJobReply{Err: fmt.Errorf("create job %s: a child cannot reserve nodes: %w", spec.ID, messages.ErrInvalidSpec)}
		}
		need += len(res.Nodes)
	}
	if ref, conflicts := r.admit(ctx, &spec, res, need); ref != nil {
		return nil, nil, &messages.CreateJobReply{Err: ref, Conflicts: conflicts}
	}
	rec := r.insert(ctx, &spec, messages.StateQueued, false, res != nil && res.HoldRack)
	rec.leaf = true
	rec.wf, rec.cleanup = m.Workflow, m.Cleanup
	r.observeAdmitted(rec)
	var kids []*record
	if res != nil {
		desc := res.Description
		if desc == "" {
			desc = "Reserved by job " + spec.ID
		}
		for _, n := range res.Nodes {
			child := messages.JobSpec{ID: uuid.NewString(), ParentID: spec.ID, Type: spec.Type, RackID: n.RackID, NodeID: n.NodeID, Devices: n.Devices, Description: desc}
			kids = append(kids, r.insert(ctx, &child, messages.StateRunning, true, false))
		}
	}
	return rec, kids, &messages.CreateJobReply{Job: r.store.snapshot(rec)}
}

// createBatch admits a parent and its children, answers, then starts the
// children (all records exist before any child work starts).
func (r *registry) createBatch(ctx actor.Context, m *messages.CreateBatch) {
	parent, admitted, reply := r.admitBatch(ctx, m)
	if len(admitted) == 0 { // refused, or a retry: its ids wait for the commit too
		seq := r.jobSeq(reply.Parent.ID)
		for _, c := range reply.Admitted {
			seq = max(seq, r.jobSeq(c.ID))
		}
		r.respond(ctx, reply, seq, &messages.CreateBatchReply{Err: errStoreDown})
	} else {
		r.respond(ctx, reply, r.lastSeq(), &messages.CreateBatchReply{Err: errStoreDown})
	}
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
	if r.storeUnavailable() {
		return nil, nil, &messages.CreateBatchReply{Err: r.storeDown()}
	}
	if spec.NodeID != "" || spec.ParentID != "" {
		return nil, nil, &messages.CreateBatchReply{Err: fmt.Errorf("create batch %s: a parent has no node and no parent: %w", spec.ID, messages.ErrInvalidSpec)}
	}
	for i, t := range m.Children {
		if t.Workflow == nil {
			return nil, nil, &messages.CreateBatchReply{Err: fmt.Errorf("create batch %s: target %d: workflow is required: %w", spec.ID, i, messages.ErrInvalidSpec)}
		}
	}
	if ref, _ := r.admit(ctx, &spec, nil, 1); ref != nil {
		return nil, nil, &messages.CreateBatchReply{Err: ref}
	}
	if spec.Description == "" {
		spec.Description = fmt.Sprintf("Batch %s in progress", spec.Type.BatchNoun())
	}
	parent := r.insert(ctx, &spec, messages.StateRunning, false, false)
	parent.cleanup = m.Cleanup
	r.observeAdmitted(parent)
	seen := make(map[lockKey]struct{}, len(m.Children))
	admitted := make([]*record, 0, len(m.Children))
	// A rejected target is logged at debug: the RPC that asked logs it
	// once at warn, with the holder job (grpc/rmsserver reason.go).
	for _, t := range m.Children {
		k := lockKey{t.RackID, t.NodeID}
		if _, dup := seen[k]; dup {
			ref := duplicateTargetRefusal(k)
			r.core.log.Debug().Str("job_id", spec.ID).Str("rack_id", k.rack).Str("node_id", k.node).Msg("batch job rejected: duplicate target")
			parent.rejected = append(parent.rejected, messages.RejectedTarget{RackID: k.rack, NodeID: k.node, Code: ref.Code, Message: ref.Message, Holder: ref.Holder})
			continue
		}
		seen[k] = struct{}{}
		child := messages.JobSpec{ID: uuid.NewString(), ParentID: spec.ID, RackID: t.RackID, NodeID: t.NodeID, Devices: t.Devices, Description: t.Description}
		if ref, _ := r.admit(ctx, &child, nil, 1); ref != nil {
			r.core.log.Debug().Str("job_id", spec.ID).Str("rack_id", k.rack).Str("node_id", k.node).Str("reason", ref.Message).Msg("batch job rejected")
			parent.rejected = append(parent.rejected, messages.RejectedTarget{RackID: k.rack, NodeID: k.node, Code: ref.Code, Message: ref.Message, Holder: ref.Holder})
			continue
		}
		rec := r.insert(ctx, &child, messages.StateQueued, false, false)
		rec.leaf = true
		rec.wf = t.Workflow
		r.observeAdmitted(rec)
		admitted = append(admitted, rec)
	}
	return parent, admitted, r.batchReply(parent)
}

func (r *registry) batchReply(parent *record) *messages.CreateBatchReply {
	out := &messages.CreateBatchReply{Parent: r.store.snapshot(parent), Rejected: append([]messages.RejectedTarget(nil), parent.rejected...)}
	for _, id := range parent.snap.ChildIDs {
		if c, ok := r.store.jobs[id]; ok {
			out.Admitted = append(out.Admitted, r.store.snapshot(c))
		}
	}
	return out
}

// childJoined tells a parent's batch actor about a new child, spawning the
// actor when the job just became a batch parent.
func (r *registry) childJoined(ctx actor.Context, parent *record, child *record) {
	if child.reservation || !parent.isBatch() {
		return
	}
	if parent.batch == nil {
		r.spawnBatch(ctx, parent)
	}
}
