package rmsserver

import (
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// A request whose handling crashes the job registry reaches the gRPC
// caller as INTERNAL with a message that says so, not as a timeout or a
// hang; the restarted registry serves the next request.
func TestRegistryCrashReachesTheCallerAsInternal(t *testing.T) {
	var armed atomic.Bool
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	// The observer runs on the registry's turn: a panic there crashes the
	// registry in the middle of the admission.
	engine, err := actors.New(sys, actors.Options{OnJob: func(o messages.JobObservation) {
		if o.State == messages.StateQueued && armed.CompareAndSwap(true, false) {
			panic("injected: registry crash during an admission")
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		engine.Close()
		sys.Shutdown()
	})
	a := startAdminRackWith(t, fastAdminTiming, func(d *Deps) { d.Jobs = engine })
	sw := a.ofKind(hw.KindSwitch)[:2]
	req := &rmspb.UpdateSwitchSystemPasswordRequest{Nodes: nodeSet(sw...), Username: "admin", Password: secretPassword}

	armed.Store(true)
	_, err = a.client.UpdateSwitchSystemPassword(rpcContext(t), req)
	if status.Code(err) != codes.Internal || !strings.Contains(status.Convert(err).Message(), "job registry failed on this request") {
		t.Fatalf("RPC whose admission crashed the registry: %v; want INTERNAL naming the registry failure", err)
	}
	if armed.Load() {
		t.Fatal("the injected crash did not happen")
	}
	if strings.Contains(err.Error(), secretPassword) {
		t.Fatal("the error shows the password")
	}

	// Whatever the crashed admission left was cancelled and ends; then the
	// same request is admitted by the restarted registry.
	if l, err := engine.Actors(rpcContext(t)); err != nil || l.Generation != 2 {
		t.Fatalf("registry generation %d (%v), want 2: one restart", l.Generation, err)
	}
	eventuallyRPC(t, "the switches are free again", func() bool {
		l, err := engine.Actors(rpcContext(t))
		return err == nil && l.HeldNodes == 0
	})
	resp, err := a.client.UpdateSwitchSystemPassword(rpcContext(t), req)
	if err != nil || resp.GetResponse().GetJobId() == "" {
		t.Fatalf("the same request after the restart: %v, %v", resp.GetResponse(), err)
	}
	states := a.waitJobs(t, resp.GetResponse().GetJobId())
	if states[0].GetExecutionState() != completed {
		t.Fatalf("rotation after the restart: %v", states[0])
	}
	a.assertNeverShown(t, secretPassword, states...)
}
