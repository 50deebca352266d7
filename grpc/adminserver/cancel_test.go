package adminserver

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/messages"
)

// untilCancelled reports Running, tells started, and fails its job with
// its context's cause once cancelled.
func untilCancelled(started chan<- struct{}) messages.Workflow {
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("flashing")
		started <- struct{}{}
		<-ctx.Done()
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, context.Cause(ctx).Error()))
	})
}

func TestCancelJobCancelsALeafWithTheOperatorsCause(t *testing.T) {
	f := start(t)
	started := make(chan struct{}, 1)
	job, err := f.engine.Create(ctxFor(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "n1"}, untilCancelled(started), nil)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	resp, err := f.client.CancelJob(ctxFor(t), &adminpb.CancelJobRequest{JobId: job.ID})
	if err != nil || resp.GetSignalled() != 1 {
		t.Fatalf("CancelJob = %v, %v", resp, err)
	}
	if err := f.engine.Wait(ctxFor(t), job.ID); err != nil {
		t.Fatal(err)
	}
	jobs, err := f.engine.Get(ctxFor(t), job.ID, false)
	if err != nil || jobs[0].State != messages.StateFailed || jobs[0].ErrorMessage != "cancelled by operator" {
		t.Fatalf("job after the operator's cancel: %+v %v", jobs, err)
	}
	if _, err := f.client.CancelJob(ctxFor(t), &adminpb.CancelJobRequest{JobId: job.ID}); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("cancel of an ended job: %v", err)
	}
}

func TestCancelJobOfABatchParentCancelsEveryChild(t *testing.T) {
	f := start(t)
	started := make(chan struct{}, 3)
	wf := untilCancelled(started)
	rep, err := f.engine.CreateBatch(ctxFor(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r"}, []messages.BatchTarget{
		{RackID: "r", NodeID: "n1", Workflow: wf}, {RackID: "r", NodeID: "n2", Workflow: wf}, {RackID: "r", NodeID: "n3", Workflow: wf},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		<-started
	}
	resp, err := f.client.CancelJob(ctxFor(t), &adminpb.CancelJobRequest{JobId: rep.Parent.ID})
	if err != nil || resp.GetSignalled() != 3 {
		t.Fatalf("CancelJob of the parent = %v, %v", resp, err)
	}
	if err := f.engine.Wait(ctxFor(t), rep.Parent.ID); err != nil {
		t.Fatal(err)
	}
	jobs, err := f.engine.Get(ctxFor(t), rep.Parent.ID, true)
	if err != nil || len(jobs) != 4 {
		t.Fatalf("%+v %v", jobs, err)
	}
	for _, c := range jobs[1:] {
		if c.State != messages.StateFailed || c.ErrorMessage != "cancelled by operator" {
			t.Fatalf("child after the parent's cancel: %+v", c)
		}
	}
	if l, err := f.client.ListActors(ctxFor(t), &adminpb.ListActorsRequest{}); err != nil || l.GetHeldNodes() != 0 {
		t.Fatalf("after the cancel: %v %v", l, err)
	}
}

func TestCancelJobRefusesUnknownAndEmptyIDs(t *testing.T) {
	f := start(t)
	if _, err := f.client.CancelJob(ctxFor(t), &adminpb.CancelJobRequest{JobId: "no-such-job"}); status.Code(err) != codes.NotFound {
		t.Fatalf("unknown job: %v", err)
	}
	if _, err := f.client.CancelJob(ctxFor(t), &adminpb.CancelJobRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("no job id: %v", err)
	}
}
