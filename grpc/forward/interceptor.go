package forward

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/grpc/rpcfields"
	"github.com/rmsd/rmsd/store"
)

// receiver is the receiving side of one member.
type receiver struct {
	cluster Cluster
	store   Store
	self    string
	log     zerolog.Logger
	// jobs are the racks of the jobs recently asked about, parents the
	// cluster parents recently recorded or asked about: both facts never
	// change once written.
	jobs    *idCache[string]
	parents *idCache[store.ClusterParent]
	// local answers the job-status calls no rack's owner answers: cluster
	// parents, and unknown ids as a single rmsd answers them.
	local *rmsserver.Handlers
}

// Interceptor forwards each RackManager call that is not Local to the
// member that owns its rack, through c, and answers the caller with the
// owner's reply, status and in-band failure reason as if it had been
// served here. The owner logs the failures it answers; this member logs
// them at debug (rmsserver.RecordLoggedReason, rmsserver.LoggedElsewhere),
// and at warn only its own (an owner not reachable). It must run
// innermost in the receiving member's server (rmsserver.Options.Inner),
// after authorization. self is
// this member's id; st finds jobs' racks and keeps cluster parents.
// Local calls, calls of other services and ByRack requests that name no
// rack (answered in band or refused by the local handler as a single rmsd
// would) go to the local handler.
func Interceptor(c Cluster, st Store, self string, log zerolog.Logger) grpc.UnaryServerInterceptor {
	return newReceiver(c, st, self, log).intercept
}

func newReceiver(c Cluster, st Store, self string, log zerolog.Logger) *receiver {
	return &receiver{cluster: c, store: st, self: self, log: log,
		jobs: newIDCache[string](defaultJobCache), parents: newIDCache[store.ClusterParent](defaultParentCache),
		local: rmsserver.NewHandlers(rmsserver.Deps{Jobs: parentJobs{}}, zerolog.Nop())}
}

func (r *receiver) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	route, ok := routeOf(info.FullMethod)
	msg, isMsg := req.(proto.Message)
	if !ok || !isMsg || route.Class == Local {
		return handler(ctx, req)
	}
	from := callerOf(ctx, r.self)
	if route.Class == ByJob {
		return r.byJob(ctx, from, info.FullMethod, msg)
	}
	racks := racksOf(msg)
	switch {
	case len(racks) == 0:
		return handler(ctx, req)
	case len(racks) == 1 || (route.Span == NoSpan && oneRackHandlers[info.FullMethod]):
		// A one-rack method's owner refuses nodes of other racks in band.
		return r.answer(ctx, forwardCall(ctx, r.cluster, from, racks[0], info.FullMethod, msg))
	case route.Span == NoSpan:
		return nil, status.Error(codes.FailedPrecondition, fmt.Sprintf(
			"%s names racks %s: in cluster mode it takes the nodes of one rack; send one call per rack",
			methodName(info.FullMethod), strings.Join(racks, ", ")))
	}
	return r.spanning(ctx, from, info.FullMethod, route, msg, racks)
}

// answer returns a forwarded call's outcome as this member's own.
func (r *receiver) answer(ctx context.Context, o outcome) (any, error) {
	if o.err != nil {
		return nil, o.err
	}
	rmsserver.RecordLoggedReason(ctx, o.reason) // the owner logged it
	return o.reply, nil
}

// byJob forwards a job-status call to the owner of its job's rack; a
// cluster parent, or a job the store does not know, is answered here. A
// cached job or parent costs no store read; otherwise the store is asked
// for the job's rack and then, if it knows none, for a cluster parent.
func (r *receiver) byJob(ctx context.Context, from caller, method string, req proto.Message) (any, error) {
	id := strings.TrimSpace(rpcfields.StringField(req.ProtoReflect(), "job_id"))
	if id == "" {
		return r.answerLocally(ctx, method, req, nil)
	}
	rack, ok := r.jobs.get(id)
	if !ok {
		if p, ok := r.parents.get(id); ok {
			return r.parentStatus(ctx, from, method, req, p)
		}
		var err error
		rack, err = r.store.JobRack(ctx, id)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return r.unknownJob(ctx, from, method, req, id)
		case err != nil:
			return nil, storeError(ctx, "find the rack of job "+id, err)
		}
		r.jobs.put(id, rack)
	}
	return r.answer(ctx, forwardCall(ctx, r.cluster, from, rack, method, req))
}

// answerLocally runs the local handler of method with the jobs it may
// show (nil: none), reporting its in-band reason as this call's.
func (r *receiver) answerLocally(ctx context.Context, method string, req proto.Message, jobs *shownJobs) (any, error) {
	lctx, reason := rpcfields.WithReason(ctx)
	if jobs != nil {
		lctx = context.WithValue(lctx, shownJobsKey{}, jobs)
	}
	reply, err := r.local.Invoke(lctx, method, req)
	if err != nil {
		return nil, err
	}
	rmsserver.RecordReason(ctx, reason.Text())
	return reply, nil
}

// storeError is the status of a failed store read.
func storeError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	return status.Error(codes.Unavailable, fmt.Sprintf("%s: the store did not answer; retry: %v", what, err))
}
