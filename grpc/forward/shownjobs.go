package forward

import (
	"context"
	"errors"

	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/messages"
)

// The job-status calls the receiving member answers itself run through
// rmsserver's own handlers, so that a cluster parent, or an unknown id,
// is answered in each RPC's exact shape: the handlers read the jobs from
// parentJobs, which shows them the jobs the call carries (shownJobs) and
// nothing else.

// shownJobs are the jobs one call may show: a cluster parent and its
// children, in the order Get returns them.
type shownJobs struct {
	id    string
	snaps []messages.JobSnapshot
}

type shownJobsKey struct{}

// errNoEngine: the receiving side has no job engine; only the job-status
// calls reach parentJobs.
var errNoEngine = errors.New("forward: no job engine on the receiving member")

// parentJobs is the receiving member's rmsserver.JobEngine: it knows the
// jobs a call carries, and no other.
type parentJobs struct{}

var _ rmsserver.JobEngine = parentJobs{}

// Get implements rmsserver.JobService.
func (parentJobs) Get(ctx context.Context, id string, includeChildren bool) ([]messages.JobSnapshot, error) {
	shown, _ := ctx.Value(shownJobsKey{}).(*shownJobs)
	if shown == nil || shown.id != id || len(shown.snaps) == 0 {
		return nil, messages.ErrJobNotFound
	}
	if !includeChildren {
		return shown.snaps[:1], nil
	}
	return shown.snaps, nil
}

func (parentJobs) Create(context.Context, messages.JobSpec, messages.Workflow, *messages.CleanupPlan) (messages.JobSnapshot, error) {
	return messages.JobSnapshot{}, errNoEngine
}

func (parentJobs) CreateBatch(context.Context, messages.JobSpec, []messages.BatchTarget, *messages.CleanupPlan) (messages.CreateBatchReply, error) {
	return messages.CreateBatchReply{}, errNoEngine
}

func (parentJobs) Seal(context.Context, string, messages.Outcome) (messages.JobSnapshot, error) {
	return messages.JobSnapshot{}, errNoEngine
}

func (parentJobs) CreateReserved(context.Context, messages.JobSpec, messages.Workflow, *messages.Reservation) (messages.CreateJobReply, error) {
	return messages.CreateJobReply{}, errNoEngine
}

func (parentJobs) Cancel(context.Context, string) (bool, error) { return false, errNoEngine }

func (parentJobs) Lease(context.Context, messages.AcquireLease) (messages.AcquireLeaseReply, error) {
	return messages.AcquireLeaseReply{}, errNoEngine
}

func (parentJobs) Release(context.Context, string) error { return errNoEngine }
