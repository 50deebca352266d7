package adminserver

import (
	"context"
	"io"
	"log/slog"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/adminpb"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/test/leakcheck"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakcheck.ProtoactorThrottle)
}

// fixture is a real job engine behind a real admin server on loopback.
type fixture struct {
	engine *actors.Engine
	client adminpb.AdminClient
}

func start(t *testing.T) *fixture {
	t.Helper()
	return startWith(t, actors.Options{})
}

// startWith is start with engine options.
func startWith(t *testing.T, opts actors.Options) *fixture {
	t.Helper()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	e, err := actors.New(sys, opts)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(e, zerolog.Nop())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
		<-done
		e.Close()
		sys.Shutdown()
	})
	return &fixture{engine: e, client: adminpb.NewAdminClient(conn)}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// gated creates a job that runs until release is closed.
func (f *fixture) gated(t *testing.T, node string, release <-chan struct{}) messages.JobSnapshot {
	t.Helper()
	started := make(chan struct{})
	s, err := f.engine.Create(ctxFor(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: node},
		messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
			job.Progress("flashing")
			close(started)
			select {
			case <-release:
				_ = job.Complete("Completed", "")
			case <-ctx.Done():
				_ = job.Fail(messages.NewFailure(messages.ErrorOther, "cancelled"))
			}
		}), nil)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	return s
}

func TestListActorsShowsTheRegistryJobsAndLocks(t *testing.T) {
	f := start(t)
	release := make(chan struct{})
	defer close(release)
	job := f.gated(t, "n1", release)
	all, err := f.client.ListActors(ctxFor(t), &adminpb.ListActorsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, a := range all.GetActors() {
		kinds[a.GetKind()]++
		if a.GetKind() != "registry" && (a.GetJobId() != job.ID || a.GetRackId() != "r" || a.GetNodeId() != "n1") {
			t.Fatalf("actor %v does not describe the job", a)
		}
	}
	if kinds["registry"] != 1 || kinds["job"] != 1 || kinds["lock"] != 1 || all.GetHeldNodes() != 1 || all.GetRegistryGeneration() != 1 {
		t.Fatalf("listing %v", all)
	}
	locks, err := f.client.ListActors(ctxFor(t), &adminpb.ListActorsRequest{Kind: "lock"})
	if err != nil || len(locks.GetActors()) != 1 || locks.GetActors()[0].GetKind() != "lock" {
		t.Fatalf("locks only: %v %v", locks, err)
	}
	if _, err := f.client.ListActors(ctxFor(t), &adminpb.ListActorsRequest{Kind: "gremlin"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("unknown kind: %v", err)
	}
}

func TestKillingAJobActorFailsTheJobAndFreesItsNode(t *testing.T) {
	f := start(t)
	release := make(chan struct{})
	defer close(release)
	job := f.gated(t, "n1", release)
	resp, err := f.client.KillActors(ctxFor(t), &adminpb.KillActorsRequest{Kind: "job", Mode: adminpb.KillMode_KILL_MODE_CRASH})
	if err != nil || len(resp.GetKilled()) != 1 || resp.GetKilled()[0].GetJobId() != job.ID {
		t.Fatalf("kill = %v, %v", resp, err)
	}
	if err := f.engine.Wait(ctxFor(t), job.ID); err != nil {
		t.Fatal(err)
	}
	jobs, err := f.engine.Get(ctxFor(t), job.ID, false)
	if err != nil || jobs[0].State != messages.StateFailed || jobs[0].ErrorCode != messages.ErrorInternal {
		t.Fatalf("job after its actor was killed: %+v %v", jobs, err)
	}
	// Its node is free once its workflow, cancelled with the actor, returned.
	f.eventually(t, "the node is free", func(l *adminpb.ListActorsResponse) bool { return l.GetHeldNodes() == 0 })
}

// eventually polls ListActors until cond holds, for at most ten seconds.
func (f *fixture) eventually(t *testing.T, what string, cond func(*adminpb.ListActorsResponse) bool) *adminpb.ListActorsResponse {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l, err := f.client.ListActors(ctxFor(t), &adminpb.ListActorsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if cond(l) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("never: %s; last listing %v", what, l)
		}
		runtime.Gosched()
	}
}

func TestKillingTheRegistryKeepsEveryJob(t *testing.T) {
	f := start(t)
	release := make(chan struct{})
	job := f.gated(t, "n1", release)
	reg, err := f.client.ListActors(ctxFor(t), &adminpb.ListActorsRequest{Kind: "registry"})
	if err != nil || len(reg.GetActors()) != 1 {
		t.Fatal(reg, err)
	}
	if _, err := f.client.KillActors(ctxFor(t), &adminpb.KillActorsRequest{Ids: []string{reg.GetActors()[0].GetId()}, Mode: adminpb.KillMode_KILL_MODE_STOP}); err != nil {
		t.Fatal(err)
	}
	for {
		l, err := f.client.ListActors(ctxFor(t), &adminpb.ListActorsRequest{})
		if err == nil && l.GetRegistryGeneration() == 2 {
			if l.GetHeldNodes() != 1 {
				t.Fatalf("the new registry lost the hold: %v", l)
			}
			break
		}
	}
	close(release)
	if err := f.engine.Wait(ctxFor(t), job.ID); err != nil {
		t.Fatal(err)
	}
	if jobs, err := f.engine.Get(ctxFor(t), job.ID, false); err != nil || jobs[0].State != messages.StateCompleted {
		t.Fatalf("job across the registry's respawn: %+v %v", jobs, err)
	}
}

func TestKillActorsRefusesBadRequests(t *testing.T) {
	f := start(t)
	cases := []struct {
		req  *adminpb.KillActorsRequest
		code codes.Code
	}{
		{&adminpb.KillActorsRequest{Kind: "job"}, codes.InvalidArgument},
		{&adminpb.KillActorsRequest{Mode: adminpb.KillMode_KILL_MODE_STOP}, codes.InvalidArgument},
		{&adminpb.KillActorsRequest{Kind: "everything", Mode: adminpb.KillMode_KILL_MODE_STOP}, codes.InvalidArgument},
		{&adminpb.KillActorsRequest{Ids: []string{"job-nope"}, Mode: adminpb.KillMode_KILL_MODE_STOP}, codes.NotFound},
	}
	for _, c := range cases {
		if _, err := f.client.KillActors(ctxFor(t), c.req); status.Code(err) != c.code {
			t.Errorf("%v: %v, want %v", c.req, err, c.code)
		}
	}
	// Sampling a kind with no actor kills nothing.
	if resp, err := f.client.KillActors(ctxFor(t), &adminpb.KillActorsRequest{Kind: "batch", Mode: adminpb.KillMode_KILL_MODE_STOP}); err != nil || len(resp.GetKilled()) != 0 {
		t.Fatalf("empty sample: %v %v", resp, err)
	}
}

func TestCallsFromOutsideLoopbackAreRefused(t *testing.T) {
	intercept := loopbackOnly(zerolog.Nop())
	called := false
	handler := func(context.Context, any) (any, error) { called = true; return nil, nil }
	info := &grpc.UnaryServerInfo{FullMethod: "/rmsd_admin.Admin/KillActors"}
	remote := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 5555}})
	if _, err := intercept(remote, nil, info, handler); status.Code(err) != codes.PermissionDenied || called {
		t.Fatalf("remote peer: %v (handler called: %v)", err, called)
	}
	local := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.ParseIP("::1"), Port: 5555}})
	if _, err := intercept(local, nil, info, handler); err != nil || !called {
		t.Fatalf("loopback peer: %v (handler called: %v)", err, called)
	}
}
