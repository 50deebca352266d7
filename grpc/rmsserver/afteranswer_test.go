package rmsserver

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

// A batch child's workflow begins only once the RPC that admitted it has
// ended (its context cancelled by gRPC after the answer).
func TestAfterAnswerHoldsTheChildUntilTheAnswer(t *testing.T) {
	rpc, answer := context.WithCancel(context.Background())
	var answered atomic.Bool
	began := false
	wf := afterAnswer(rpc, messages.WorkflowFunc(func(ctx context.Context, _ messages.Reporter) {
		began = true
		if !answered.Load() {
			t.Error("the child began before the RPC answered")
		}
		if ctx.Err() != nil {
			t.Errorf("the child's own context is cancelled: %v", ctx.Err())
		}
	}))
	go func() {
		answered.Store(true)
		answer()
	}()
	wf.Run(context.Background(), nil)
	if !began {
		t.Fatal("the child never began after the answer")
	}
}

// A child cancelled while it waits for the answer runs its workflow at
// once, which finds its context cancelled and ends as a cancelled job
// does.
func TestAfterAnswerCancelReachesAWaitingChild(t *testing.T) {
	rpc, answer := context.WithCancel(context.Background())
	defer answer()
	job, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	wf := afterAnswer(rpc, messages.WorkflowFunc(func(ctx context.Context, _ messages.Reporter) { done <- ctx.Err() }))
	go wf.Run(job, nil)
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the workflow ran with a live context after its job was cancelled")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled child still waits for the RPC's answer")
	}
}

// A context that can never end (a call made outside gRPC) holds nothing:
// the workflow is the one given.
func TestAfterAnswerWithoutAnEndingContextHoldsNothing(t *testing.T) {
	ran := false
	afterAnswer(context.Background(), messages.WorkflowFunc(func(context.Context, messages.Reporter) { ran = true })).Run(context.Background(), nil)
	if !ran {
		t.Fatal("the workflow did not run")
	}
}
