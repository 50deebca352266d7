package adminserver

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/messages"
)

// deaf creates a job whose workflow ignores its context: it returns only
// once release is closed.
func (f *fixture) deaf(t *testing.T, node string, release <-chan struct{}) messages.JobSnapshot {
	t.Helper()
	started := make(chan struct{})
	s, err := f.engine.Create(ctxFor(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: node},
		messages.WorkflowFunc(func(context.Context, messages.Reporter) {
			close(started)
			<-release
		}), nil)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	return s
}

func TestQuarantinedJobIsListedAndReleasedByTheOperator(t *testing.T) {
	f := startWith(t, actors.Options{QuarantineAfter: 20 * time.Millisecond})
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the engine closes
	job := f.deaf(t, "n1", release)
	if _, err := f.client.ReleaseQuarantinedJob(ctxFor(t), &adminpb.ReleaseQuarantinedJobRequest{JobId: job.ID}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("release of a job that is not quarantined: %v", err)
	}
	if _, err := f.client.KillActors(ctxFor(t), &adminpb.KillActorsRequest{Ids: []string{"job-" + job.ID}, Mode: adminpb.KillMode_KILL_MODE_STOP}); err != nil {
		t.Fatal(err)
	}
	l := f.eventually(t, "the job is listed quarantined", func(l *adminpb.ListActorsResponse) bool { return len(l.GetQuarantined()) == 1 })
	q := l.GetQuarantined()[0]
	if q.GetJobId() != job.ID || q.GetRackId() != "r" || q.GetNodeId() != "n1" || q.GetState() != "failed" ||
		len(q.GetHeld()) != 1 || q.GetHeld()[0] != "r/n1" || q.GetCancelledAt() == "" || l.GetHeldNodes() != 1 {
		t.Fatalf("listing %v", l)
	}
	rep, err := f.client.ReleaseQuarantinedJob(ctxFor(t), &adminpb.ReleaseQuarantinedJobRequest{JobId: job.ID})
	if err != nil || rep.GetJob().GetJobId() != job.ID || len(rep.GetJob().GetHeld()) != 1 {
		t.Fatalf("release = %v, %v", rep, err)
	}
	if l, err := f.client.ListActors(ctxFor(t), &adminpb.ListActorsRequest{}); err != nil || l.GetHeldNodes() != 0 || len(l.GetQuarantined()) != 0 {
		t.Fatalf("after the release: %v %v", l, err)
	}
	if _, err := f.client.ReleaseQuarantinedJob(ctxFor(t), &adminpb.ReleaseQuarantinedJobRequest{JobId: "no-such-job"}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown job: %v", err)
	}
	if _, err := f.client.ReleaseQuarantinedJob(ctxFor(t), &adminpb.ReleaseQuarantinedJobRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("empty job id: %v", err)
	}
}
