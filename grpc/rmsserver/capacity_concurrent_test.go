package rmsserver

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
)

// rotationResult is one caller's UpdateSwitchSystemPassword answer.
type rotationResult struct {
	caller string
	nodes  int
	resp   *rmspb.UpdateSwitchSystemPasswordResponse
	err    error
}

// The fairness rule of docs/operations.md (Job capacity) with two callers
// sending at once: no caller holds capacity with finished jobs. A tracker
// of 8 records is full of caller A's failed rotations; then, in each
// round, A (three more unreachable switches, failing at once) and B (one
// reachable switch), on their own connections, are released together by
// one channel. Both are admitted whole every round, whichever comes first:
// the finished jobs make room, and the jobs in flight (at most 6) never
// fill the tracker.
func TestConcurrentCallersAreAdmittedWhileFinishedJobsFillTheTracker(t *testing.T) {
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	engine, err := actors.New(sys, actors.Options{MaxTrackedJobs: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		engine.Close()
		sys.Shutdown()
	})
	a := startAdminRackWith(t, fastAdminTiming, func(d *Deps) { d.Jobs = engine })
	switches := a.ofKind(hw.KindSwitch)
	callerA := rmspb.NewRackManagerClient(dial(t, a.conn.Target(), nil))
	callerB := rmspb.NewRackManagerClient(dial(t, a.conn.Target(), nil))
	const perBatch, rounds = 3, 3
	if len(switches) < rounds+1 {
		t.Fatalf("the rack has %d switches, want at least %d", len(switches), rounds+1)
	}
	unreachable := func(r int) *rmspb.NodeSet {
		var batch []hw.Node
		for i := range perBatch {
			batch = append(batch, unreachableSwitch(switches[0], r*perBatch+i))
		}
		return nodeSet(batch...)
	}

	// Fill the tracker with finished jobs: two batches of four records.
	for r := range 2 {
		resp, err := callerA.UpdateSwitchSystemPassword(rpcContext(t), &rmspb.UpdateSwitchSystemPasswordRequest{
			Nodes: unreachable(r), Username: "admin", Password: secretPassword})
		if err != nil || resp.GetResponse().GetJobId() == "" {
			t.Fatalf("filling the tracker, batch %d: %v, %v", r, resp.GetResponse(), err)
		}
		a.waitJobs(t, resp.GetResponse().GetJobId())
	}

	for r := range rounds {
		ctxA, ctxB := rpcContext(t), rpcContext(t)
		start := make(chan struct{})
		results := make(chan rotationResult, 2)
		send := func(ctx context.Context, caller string, c rmspb.RackManagerClient, nodes *rmspb.NodeSet) {
			<-start
			resp, err := c.UpdateSwitchSystemPassword(ctx, &rmspb.UpdateSwitchSystemPasswordRequest{
				Nodes: nodes, Username: "admin", Password: secretPassword})
			results <- rotationResult{caller: caller, nodes: len(nodes.GetNodes()), resp: resp, err: err}
		}
		go send(ctxA, "A", callerA, unreachable(2+r))
		go send(ctxB, "B", callerB, nodeSet(switches[1+r]))
		close(start)

		jobs := map[string]string{}
		for range 2 {
			res := <-results
			got := res.resp.GetResponse()
			if res.err != nil || got.GetJobId() == "" || got.GetStats().GetSuccessfulNodes() != uint32(res.nodes) || got.GetStats().GetFailedNodes() != 0 {
				t.Fatalf("round %d, caller %s: %v, %v; want all %d nodes started", r, res.caller, got, res.err, res.nodes)
			}
			jobs[res.caller] = got.GetJobId()
		}
		if st := a.waitJobs(t, jobs["A"]); st[0].GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
			t.Fatalf("round %d, caller A: %v; want the unreachable switches failed", r, st)
		}
		if st := a.waitJobs(t, jobs["B"]); st[0].GetExecutionState() != completed {
			t.Fatalf("round %d, caller B's rotation: %v", r, st)
		}
	}
}
