package actors

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

// batchResult is one caller's CreateBatch outcome.
type batchResult struct {
	caller string
	rep    messages.CreateBatchReply
	err    error
}

// TestConcurrentCallersNearCapacityAreAdmittedOneRequestAtATime checks
// the fairness rule of docs/operations.md (Job capacity) with two callers
// released at once: requests are admitted one at a time in mailbox order
// with no per-caller quota, finished jobs never hold capacity, and jobs in
// flight that fill the tracker refuse the other caller until they finish.
// The tracker (4) holds two finished jobs and one in flight; each caller
// asks for a batch of two nodes (three records). Whichever request comes
// first is admitted whole, evicting the finished jobs, and the other is
// refused whole, naming the jobs in flight: had their admissions
// interleaved, both would be partly admitted.
func TestConcurrentCallersNearCapacityAreAdmittedOneRequestAtATime(t *testing.T) {
	e, _ := newEngine(t, Options{MaxTrackedJobs: 4, TerminalJobTTL: time.Hour})
	var done []string
	for i := range 2 {
		s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: fmt.Sprint("done-", i)}, completes("Completed", ""))
		waitTerminal(t, e, s.ID)
		done = append(done, s.ID)
	}
	g := newGate()
	held := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "held"}, g)

	callers := map[string][]messages.BatchTarget{
		"A": targets(g, "r", "a1", "r", "a2"),
		"B": targets(g, "r", "b1", "r", "b2"),
	}
	spec := messages.JobSpec{Type: messages.TypeSwitchSystemPasswordUpdate}
	ctx := testCtx(t)
	start := make(chan struct{})
	results := make(chan batchResult, len(callers))
	var wg sync.WaitGroup
	for caller, ts := range callers {
		wg.Go(func() {
			<-start
			rep, err := e.CreateBatch(ctx, spec, ts, nil)
			results <- batchResult{caller: caller, rep: rep, err: err}
		})
	}
	close(start)
	wg.Wait()
	close(results)

	var admitted, refused []batchResult
	for r := range results {
		if r.err == nil {
			admitted = append(admitted, r)
		} else {
			refused = append(refused, r)
		}
	}
	if len(admitted) != 1 || len(refused) != 1 {
		t.Fatalf("admitted %+v, refused %+v; want one caller admitted whole and the other refused", admitted, refused)
	}
	won, lost := admitted[0], refused[0]
	if len(won.rep.Admitted) != 2 || len(won.rep.Rejected) != 0 {
		t.Fatalf("caller %s: admitted %d, rejected %+v; want both nodes admitted", won.caller, len(won.rep.Admitted), won.rep.Rejected)
	}
	ref := refusal(t, lost.err, messages.ErrAtCapacity)
	want := "job tracker at capacity: 4 jobs in flight (limit 4; job: 1, switch_system_password_update: 3); retry after in-flight jobs finish"
	if ref.Message != want {
		t.Fatalf("caller %s refused with %q, want %q", lost.caller, ref.Message, want)
	}
	for _, id := range done {
		if !gone(t, e, id) {
			t.Errorf("finished job %s kept while caller %s was refused", id, lost.caller)
		}
	}

	// Once the jobs in flight finish, the refused caller is admitted.
	close(g.release)
	waitTerminal(t, e, held.ID, won.rep.Parent.ID)
	rep := mustBatch(t, e, spec.Type, callers[lost.caller])
	if len(rep.Admitted) != 2 || len(rep.Rejected) != 0 {
		t.Fatalf("caller %s retried: admitted %d, rejected %+v; want both nodes", lost.caller, len(rep.Admitted), rep.Rejected)
	}
	waitTerminal(t, e, rep.Parent.ID)
}
