package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/grpc/adminserver"
	"github.com/rmsd/rmsd/messages"
)

// startAdmin serves a real admin service over a real job engine on a
// loopback port, stopped when the test ends.
func startAdmin(t *testing.T) (*actors.Engine, string) {
	t.Helper()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	e, err := actors.New(sys, actors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := adminserver.New(e, zerolog.Nop())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		<-done
		e.Close()
		sys.Shutdown()
	})
	return e, lis.Addr().String()
}

func TestJobsCancelCancelsABatchParentAndEveryChild(t *testing.T) {
	engine, adminAddr := startAdmin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	started := make(chan struct{}, 2)
	wf := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("flashing")
		started <- struct{}{}
		<-ctx.Done()
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, context.Cause(ctx).Error()))
	})
	rep, err := engine.CreateBatch(ctx, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: rack}, []messages.BatchTarget{
		{RackID: rack, NodeID: "rack-001-compute-01", Workflow: wf}, {RackID: rack, NodeID: "rack-001-compute-02", Workflow: wf},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	<-started

	out := ok(t, "jobs", "cancel", "--admin-addr", adminAddr, rep.Parent.ID)
	if !strings.Contains(out, "job "+rep.Parent.ID+": 2 workflow(s) told to stop") {
		t.Errorf("jobs cancel printed %q", out)
	}
	if err := engine.Wait(ctx, rep.Parent.ID); err != nil {
		t.Fatal(err)
	}
	jobs, err := engine.Get(ctx, rep.Parent.ID, true)
	if err != nil || len(jobs) != 3 {
		t.Fatalf("%+v %v", jobs, err)
	}
	for _, c := range jobs[1:] {
		if c.State != messages.StateFailed || c.ErrorMessage != "cancelled by operator" {
			t.Errorf("child after jobs cancel: %+v", c)
		}
	}

	again := rmsctl(t, "jobs", "cancel", "--admin-addr", adminAddr, rep.Parent.ID)
	if again.code != 5 || !strings.Contains(again.stderr, "has already ended") {
		t.Errorf("cancel of an ended job: exit %d, %q; want 5", again.code, again.stderr)
	}
	unknown := rmsctl(t, "jobs", "cancel", "--admin-addr", adminAddr, "no-such-job")
	if unknown.code != 4 || !strings.Contains(unknown.stderr, "job no-such-job not found") {
		t.Errorf("cancel of an unknown job: exit %d, %q; want 4", unknown.code, unknown.stderr)
	}
	down := rmsctl(t, "--timeout", "5s", "jobs", "cancel", "--admin-addr", "127.0.0.1:1", rep.Parent.ID)
	if down.code != 3 || !strings.Contains(down.stderr, "admin service at 127.0.0.1:1 unreachable") {
		t.Errorf("admin service down: exit %d, %q; want 3 naming it", down.code, down.stderr)
	}
}

func TestJobsCancelPrintsTheReplyAsJSON(t *testing.T) {
	engine, adminAddr := startAdmin(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	started := make(chan struct{})
	job, err := engine.Create(ctx, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: rack, NodeID: "rack-001-compute-03"},
		messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
			close(started)
			<-ctx.Done()
			_ = job.Fail(messages.NewFailure(messages.ErrorOther, context.Cause(ctx).Error()))
		}), nil)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	resp := jsonReply(t, ok(t, "-o", "json", "jobs", "cancel", "--admin-addr", adminAddr, job.ID),
		func() *adminpb.CancelJobResponse { return &adminpb.CancelJobResponse{} })
	if resp.GetSignalled() != 1 {
		t.Errorf("-o json jobs cancel = %v", resp)
	}
	if err := engine.Wait(ctx, job.ID); err != nil {
		t.Fatal(err)
	}
}
