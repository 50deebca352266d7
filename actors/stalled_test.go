package actors

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// stalledStoreTimeout is the commit deadline of the stalled-store test:
// long against its ask timeout (as in production, where a gRPC call's
// engine retries every 2 s), so a stalled commit outlives several attempts
// of the same admission.
const stalledStoreTimeout = 10 * time.Second

// TestJournalStalledStoreRefusesAdmissionAndStillAnswersReads puts a
// proxy that stops forwarding (no reset, no error: the commit just hangs)
// in front of PostgreSQL. While the commit of a finished job's seal hangs,
// reading that job answers from memory within a few read waits, well
// before the commit's deadline; a batch admitted meanwhile is refused with
// ErrStoreUnavailable within the commit's deadline, with no id handed out
// (not the parent, not a child), although the facade retried its request
// several times; none of its children's workflows ever runs.
func TestJournalStalledStoreRefusesAdmissionAndStillAnswersReads(t *testing.T) {
	proxy, via := storetest.ProxyPostgres(t, storetest.TempPostgresDatabase(t))
	st := openJournalStore(t, func(ctx context.Context) (store.Store, error) {
		return sqlstore.OpenPostgres(ctx, via, 4, sqlstore.Options{})
	})
	e, _ := newEngine(t, Options{Journal: st, AskTimeout: 200 * time.Millisecond, StoreTimeout: stalledStoreTimeout})

	release := make(chan struct{})
	a := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "a"}, messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("working")
		<-release
		_ = job.Complete("Completed", "{}")
	}))
	eventually(t, "job a running, committed", func() bool { return mustGet(t, e, a.ID).State == messages.StateRunning })

	proxy.Stall()
	close(release) // a's seal goes into a commit that hangs

	// Reads: a's state comes from memory while its commit hangs. The old
	// engine held the read until the commit failed (the store deadline).
	readBound := 3 * e.core.journal.readWait
	readCtx, cancelRead := context.WithTimeout(context.Background(), readBound)
	defer cancelRead()
	for {
		jobs, err := e.Get(readCtx, a.ID, false)
		if err != nil {
			t.Fatalf("read of job a while the store stalls: %v (bound %s, store deadline %s)", err, readBound, stalledStoreTimeout)
		}
		if jobs[0].State == messages.StateCompleted {
			break
		}
	}

	var ran atomic.Int32
	child := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		ran.Add(1)
		_ = job.Complete("Completed", "{}")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 6*stalledStoreTimeout)
	defer cancel()
	start := time.Now()
	rep, err := e.CreateBatch(ctx, messages.JobSpec{Type: messages.TypeSwitchSystemPasswordUpdate}, []messages.BatchTarget{
		{RackID: "r", NodeID: "b", Workflow: child},
		{RackID: "r", NodeID: "c", Workflow: child},
	}, nil)
	took := time.Since(start)
	if !errors.Is(err, messages.ErrStoreUnavailable) {
		t.Fatalf("batch while the store stalls: err %v, reply %+v; want ErrStoreUnavailable", err, rep)
	}
	if rep.Parent.ID != "" || len(rep.Admitted) != 0 {
		t.Errorf("refused batch handed out ids: parent %q, %d children", rep.Parent.ID, len(rep.Admitted))
	}
	if took > 3*stalledStoreTimeout {
		t.Errorf("batch refused after %s, want within 3× the store deadline %s", took, stalledStoreTimeout)
	}

	proxy.Restore()
	eventually(t, "the journal is written again", func() bool { return !e.core.journal.unavailable() })
	again := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "d"}, completes("Completed", "{}"))
	waitTerminal(t, e, again.ID)
	if n := ran.Load(); n != 0 {
		t.Errorf("%d children of the refused batch ran", n)
	}
}

// TestJournalHungCommitRefusesARetriedCreate: a journal commit that hangs
// (a held write that only its deadline ends) outlives several attempts of
// the facade to create one job. Every attempt after the first is a retry
// the registry recognises; it too waits for the commit, so the caller gets
// ErrStoreUnavailable within the store deadline, not the job, and the
// workflow never runs. Before, the retry was answered with the job from
// memory once the commit failed.
func TestJournalHungCommitRefusesARetriedCreate(t *testing.T) {
	const storeTimeout = 2 * time.Second
	j := &cutJournal{Journal: journalBackends[0].open(t)}
	e, _ := newEngine(t, Options{Journal: j, AskTimeout: 100 * time.Millisecond, StoreTimeout: storeTimeout})
	waiting, hold := j.holdWrites()
	release := sync.OnceFunc(hold)
	defer release()

	var ran atomic.Int32
	wf := messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		ran.Add(1)
		_ = job.Complete("Completed", "{}")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*storeTimeout)
	defer cancel()
	start := time.Now()
	s, err := e.Create(ctx, messages.JobSpec{RackID: "r", NodeID: "n"}, wf, nil)
	took := time.Since(start)
	<-waiting
	if !errors.Is(err, messages.ErrStoreUnavailable) || s.ID != "" {
		t.Fatalf("create while the commit hangs: job %q, %v; want no job and ErrStoreUnavailable", s.ID, err)
	}
	if took > 3*storeTimeout {
		t.Errorf("create refused after %s, want within 3× the store deadline %s", took, storeTimeout)
	}
	release()
	eventually(t, "the journal is written again", func() bool { return !e.core.journal.unavailable() })
	again := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "m"}, completes("Completed", "{}"))
	waitTerminal(t, e, again.ID)
	if n := ran.Load(); n != 0 {
		t.Errorf("the refused job's workflow ran %d times", n)
	}
}
