package actors

import (
	"context"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// A workflow's context names its job as the holder of its hardware
// requests, and so does the part of it that shutdown does not cancel.
func TestWorkflowContextNamesTheJobAsHolder(t *testing.T) {
	e, _ := newEngine(t, Options{})
	type seen struct{ holder, shielded string }
	got := make(chan seen, 1)
	wf := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		got <- seen{hw.HolderOf(ctx), hw.HolderOf(messages.ShieldFromShutdown(ctx))}
		_ = job.Complete("Completed", "")
	})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, wf)
	waitTerminal(t, e, s.ID)
	g := <-got
	if g.holder != s.ID || g.shielded != s.ID {
		t.Fatalf("workflow context holder %q, shielded %q; want the job id %q for both", g.holder, g.shielded, s.ID)
	}
}
