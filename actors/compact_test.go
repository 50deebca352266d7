package actors

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

// envJournalFull selects the full figure of the compaction test: 100,000
// jobs through a 10,000-job retention (the default run: 10,000 through 1,000).
const envJournalFull = "RMSD_TEST_JOURNAL_FULL"

// finishes is a workflow that completes at once.
var finishes = messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
	_ = job.Complete("Completed", `{"status":"completed"}`)
})

// TestJournalCompactionFollowsRetention pushes many times max_tracked_jobs
// through the engine in batches of 100 and checks that the journal stays
// bounded by the retention, not by the number of jobs ever run, and that
// it still replays to the same index.
func TestJournalCompactionFollowsRetention(t *testing.T) {
	total, retain := 10_000, 1_000
	if os.Getenv(envJournalFull) == "1" {
		total, retain = 100_000, 10_000
	}
	st := journalBackends[0].open(t)
	j := &cutJournal{Journal: st}
	e, clk := newEngine(t, Options{Journal: j, MaxTrackedJobs: retain, TerminalJobTTL: time.Minute})
	ts := make([]messages.BatchTarget, 100)
	for i := range ts {
		ts[i] = messages.BatchTarget{RackID: "r", NodeID: itoa(i), Workflow: finishes}
	}
	var firstParent string
	for run := 0; run < total; run += len(ts) + 1 {
		rep := mustBatch(t, e, messages.TypeFirmwareUpdate, ts)
		if len(rep.Admitted) != len(ts) {
			t.Fatalf("after %d jobs: admitted %d of %d children (%+v)", run, len(rep.Admitted), len(ts), rep.Rejected)
		}
		if firstParent == "" {
			firstParent = rep.Parent.ID
		}
		waitTerminal(t, e, rep.Parent.ID)
		if tracked, _ := e.Load(); tracked+2*(len(ts)+1) > retain {
			// The index is full to the retention: everything finished so
			// far expires, as the TTL would let it on a busy daemon.
			clk.Advance(2 * time.Minute)
		}
	}
	_, _ = e.Get(testCtx(t), "any", false) // every earlier turn has ended: Load is theirs
	tracked, _ := e.Load()
	e.Close()

	rows, err := st.ReadEvents(testCtx(t), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	events := 0
	for _, r := range rows {
		evs, err := decodeRow(r)
		if err != nil {
			t.Fatal(err)
		}
		events += len(evs)
	}
	// A snapshot (a job and a hold each at most) plus a tail of at most
	// four events per job and the slack, plus the turn that crossed it.
	bound := 2*retain + 4*retain + compactSlack + 1000
	t.Logf("%d jobs through a retention of %d: journal has %d rows, %d events (bound %d); %d commits",
		total, retain, len(rows), events, bound, j.commits.Load())
	if events > bound || len(rows) > bound {
		t.Errorf("journal holds %d rows and %d events after %d jobs; want at most %d (it follows the retention of %d)", len(rows), events, total, bound, retain)
	}

	e2, _ := newEngine(t, Options{Journal: st, MaxTrackedJobs: retain, TerminalJobTTL: time.Minute})
	// Load is published at the end of a registry turn; the replayed
	// index shows once the registry's first turn has ended.
	eventually(t, fmt.Sprintf("the replayed journal tracks the %d jobs the engine tracked", tracked),
		func() bool { got, _ := e2.Load(); return got == tracked })
	if _, err := e2.Get(testCtx(t), firstParent, false); err == nil {
		t.Errorf("the first batch, evicted long ago, came back from the journal")
	}
}
