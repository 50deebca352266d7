package forward

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/rmsd/rmsd/clusterparent"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/grpc/rpcfields"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// A cluster parent stands for a batch whose nodes were in several racks:
// each rack's owner admitted a batch of its own (a parent with one child
// per node, all or nothing within the rack being the owner's engine's
// business), and the member that received the request recorded which
// before answering the cluster parent's id. Its status is computed on
// every read, by any member, from the racks' batches: the same state,
// description, error and failure document a single rmsd's batch parent
// over the same children shows (clusterparent.Aggregate), with every node's
// child job listed as its child.

// spanning splits a request over several racks, forwards each part to its
// rack's owner and merges the replies; a batch gets a cluster parent.
func (r *receiver) spanning(ctx context.Context, from caller, method string, route Route, req proto.Message, racks []string) (any, error) {
	parts, order := splitByRack(req, racks)
	outs := forwardParts(ctx, r.cluster, from, method, parts)
	if err := allFailed(outs); err != nil {
		// Every rack refused the request, as a single rmsd refuses it
		// (the same request fields are wrong for each), or none answered.
		return nil, err
	}
	replies := make([]rackReply, len(parts))
	var reasons []string
	// ownersLogged stays set while every failure is one an owner logged;
	// this member's own (an owner not reachable) it logs itself.
	ownersLogged := true
	for i, o := range outs {
		if o.err != nil {
			why := status.Convert(o.err).Message()
			replies[i] = rackReply{parts[i].rack, failedReply(method, why, parts[i])}
			reasons = append(reasons, "rack "+parts[i].rack+": "+why)
			ownersLogged = ownersLogged && o.logged
			continue
		}
		replies[i] = rackReply{parts[i].rack, o.reply.ProtoReflect()}
		if o.reason != "" {
			reasons = append(reasons, "rack "+parts[i].rack+": "+o.reason)
		}
	}
	var parentID string
	var unrecorded error
	if route.Span == SpanJobs {
		parentID, unrecorded = r.recordParent(ctx, method, route.JobType, parts, outs)
	}
	merged := merge(method, replies, order, parentID)
	if unrecorded != nil {
		notRecorded(merged, unrecorded) // recordParent logged why
		reasons = append(reasons, unrecorded.Error())
	}
	if _, failed := rpcfields.Failure(merged); failed {
		record := rmsserver.RecordReason
		if ownersLogged {
			record = rmsserver.RecordLoggedReason
		}
		record(ctx, strings.Join(reasons, "; "))
	}
	return merged, nil
}

// allFailed is the first rack's error when every rack answered one. It is
// marked logged by its owner (rmsserver.LoggedElsewhere) only when every
// rack's owner logged its own: an error of this member's (an owner not
// reachable) is its to log.
func allFailed(outs []outcome) error {
	for _, o := range outs {
		if o.err == nil {
			return nil
		}
	}
	for _, o := range outs {
		if !o.logged {
			return status.Convert(outs[0].err).Err()
		}
	}
	return outs[0].err
}

// recordParent records the cluster parent of a split batch: each rack's
// batch (the job_id of its reply) or why it has none. It returns the
// parent's id, "" when no rack admitted a batch (there is nothing to
// follow); an error when the record could not be written, the racks'
// batches running nonetheless.
func (r *receiver) recordParent(ctx context.Context, method string, t messages.JobType, parts []part, outs []outcome) (string, error) {
	p := store.ClusterParent{ID: uuid.NewString(), Type: t.String(), Method: method, Member: r.self}
	anyJob := false
	for i, o := range outs {
		rack := store.ClusterParentRack{RackID: parts[i].rack}
		switch {
		case o.err != nil:
			rack.Failure = status.Convert(o.err).Message()
		default:
			rack.JobID = replyJobID(o.reply)
			if rack.JobID == "" {
				rack.Failure, _ = rpcfields.Failure(o.reply)
				if rack.Failure == "" {
					rack.Failure = "no job was admitted"
				}
			}
		}
		anyJob = anyJob || rack.JobID != ""
		p.Racks = append(p.Racks, rack)
	}
	if !anyJob {
		return "", nil
	}
	stored, err := r.store.CreateClusterParent(context.WithoutCancel(ctx), p)
	if err != nil {
		r.log.Error().Err(err).Str("job_id", p.ID).Str("rpc", method).Msg("cluster parent not recorded; the racks' jobs run without it")
		var jobs []string
		for _, rk := range p.Racks {
			if rk.JobID != "" {
				jobs = append(jobs, "rack "+rk.RackID+": "+rk.JobID)
			}
		}
		return "", fmt.Errorf("the cluster parent could not be recorded (%v); follow each rack's job instead: %s", err, strings.Join(jobs, ", "))
	}
	// The caller will poll it here first: this member never reads it back.
	r.parents.put(stored.ID, stored)
	r.log.Info().Str("job_id", p.ID).Str("rpc", method).Int("racks", len(p.Racks)).Msg("cluster parent recorded")
	return p.ID, nil
}

// replyJobID is the job id a batch reply names: its response's job_id.
func replyJobID(reply proto.Message) string {
	m := reply.ProtoReflect()
	if f := m.Descriptor().Fields().ByName("response"); f != nil && f.Message() != nil && m.Has(f) {
		return rpcfields.StringField(m.Get(f).Message(), "job_id")
	}
	return rpcfields.StringField(m, "job_id")
}

// notRecorded marks a merged batch reply whose cluster parent was not
// recorded: FAILURE, with why in its message.
func notRecorded(reply proto.Message, why error) {
	m := reply.ProtoReflect()
	if f := m.Descriptor().Fields().ByName("response"); f != nil && f.Message() != nil {
		m = m.Mutable(f).Message()
	}
	fields := m.Descriptor().Fields()
	if f := fields.ByName("status"); f != nil && isStatus(f) {
		m.Set(f, protoreflect.ValueOfEnum(protoreflect.EnumNumber(rmspb.ReturnCode_RETURN_CODE_FAILURE)))
	}
	if f := fields.ByName("message"); f != nil && isMessage(f) {
		msg := why.Error()
		if old := m.Get(f).String(); old != "" {
			msg += "; " + old
		}
		m.Set(f, protoreflect.ValueOfString(msg))
	}
}

// unknownJob answers a job-status call for an id no rack's journal
// knows: a cluster parent's status, or the answer a single rmsd gives for
// an unknown id. A parent read from the store is cached: its record never
// changes. An id the store does not know is not: the caller gets the id
// of a parent only once its record is written, so a miss is a wrong or
// expired id, and remembering it would only hide a record written after
// all (and grow with every wrong id asked).
func (r *receiver) unknownJob(ctx context.Context, from caller, method string, req proto.Message, id string) (any, error) {
	p, err := r.store.ClusterParent(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return r.answerLocally(ctx, method, req, nil)
	case err != nil:
		return nil, storeError(ctx, "read job "+id, err)
	}
	r.parents.put(id, p)
	return r.parentStatus(ctx, from, method, req, p)
}

// parentStatus answers a job-status call for the cluster parent p with
// its status aggregated from its racks' batches.
func (r *receiver) parentStatus(ctx context.Context, from caller, method string, req proto.Message, p store.ClusterParent) (any, error) {
	snaps, err := r.aggregate(ctx, from, p)
	if err != nil {
		return nil, err
	}
	return r.answerLocally(ctx, method, req, &shownJobs{id: p.ID, snaps: snaps})
}

// aggregate reads each rack's batch through its owner and returns the
// cluster parent's snapshot followed by every child's, rack by rack
// (clusterparent.Aggregate).
func (r *receiver) aggregate(ctx context.Context, from caller, p store.ClusterParent) ([]messages.JobSnapshot, error) {
	var asks []part // a GetJobStatus of each rack's batch, racks without one aside
	for _, rk := range p.Racks {
		if rk.JobID != "" {
			asks = append(asks, part{rack: rk.RackID, req: &rmspb.GetJobStatusRequest{JobId: rk.JobID, IncludeChildJobStates: true}})
		}
	}
	outs := forwardParts(ctx, r.cluster, from, rmspb.RackManager_GetJobStatus_FullMethodName, asks)
	batches := make([]clusterparent.RackBatch, len(p.Racks))
	for i, rk := range p.Racks {
		if rk.JobID == "" {
			continue
		}
		out := outs[0]
		outs = outs[1:]
		switch {
		case status.Code(out.err) == codes.NotFound:
			batches[i].Err = messages.ErrJobNotFound // the rack's batch is gone (retention)
		case out.err != nil:
			batches[i].Err = out.err
		default:
			for _, s := range out.reply.(*rmspb.GetJobStatusResponse).GetJobStates() {
				batches[i].Jobs = append(batches[i].Jobs, snapshotOf(s))
			}
		}
	}
	return clusterparent.Aggregate(p, batches)
}

// snapshotOf reads a job's wire status back.
func snapshotOf(js *rmspb.JobStatus) messages.JobSnapshot {
	return messages.JobSnapshot{
		ID: js.GetJobId(), ParentID: js.GetParentJobId(), ChildIDs: js.GetChildJobIds(),
		State: messages.JobState(js.GetExecutionState()), Description: js.GetStateDescription(),
		RackID: js.GetRackId(), NodeID: js.GetNodeId(), ErrorCode: messages.JobError(js.GetErrorCode()),
		ErrorMessage: js.GetErrorMessage(), ResultJSON: js.GetResultJson(),
		CreatedAt: js.GetCreatedAt().AsTime(), UpdatedAt: js.GetUpdatedAt().AsTime(),
	}
}
