package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// recordingJournal is a store.Journal in front of a real one that keeps a
// copy of every row handed to it for writing, and counts the writes.
type recordingJournal struct {
	store.Journal
	mu     sync.Mutex
	rows   []store.Event
	writes int
}

func (r *recordingJournal) record(rows []store.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, rows...)
	r.writes++
}

func (r *recordingJournal) AppendEvents(ctx context.Context, rows []store.Event) ([]store.Event, error) {
	r.record(rows)
	return r.Journal.AppendEvents(ctx, rows)
}

func (r *recordingJournal) CompactEvents(ctx context.Context, rows []store.Event) ([]store.Event, error) {
	r.record(rows)
	return r.Journal.CompactEvents(ctx, rows)
}

// jobsNamed returns every job id the written rows name, sorted.
func (r *recordingJournal) jobsNamed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, row := range r.rows {
		out = append(out, row.Jobs...)
	}
	slices.Sort(out)
	return out
}

// writeCount returns how many writes were attempted.
func (r *recordingJournal) writeCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes
}

// TestJournalReplayUsesTheInterruptedMessage: an engine built with
// Options.Interrupted on a journal left by a dead one seals the job that
// was running with that message, at the stage it was at.
func TestJournalReplayUsesTheInterruptedMessage(t *testing.T) {
	st := journalBackends[0].open(t)
	first := &cutJournal{Journal: st}
	e1, _ := newEngine(t, Options{Journal: first})
	g := newGate()
	running := mustCreate(t, e1, messages.JobSpec{RackID: "r1", NodeID: "a"}, g)
	g.waitRunning(t, e1, 1)
	first.cut.Store(true) // the member is lost: nothing more reaches the store

	interrupted := func(stage string) string {
		return fmt.Sprintf("interrupted: member m-a left the cluster at stage %q; the state of the hardware is unknown", stage)
	}
	e2, _ := newEngine(t, Options{Journal: st, Interrupted: interrupted})
	got := mustGet(t, e2, running.ID)
	want := `interrupted: member m-a left the cluster at stage "waiting at gate"; the state of the hardware is unknown`
	if got.State != messages.StateFailed || got.ErrorCode != messages.ErrorInternal || got.ErrorMessage != want {
		t.Errorf("replayed job = %+v, want Failed/Internal %q", got, want)
	}
	// Its node is free on the new engine.
	waitTerminal(t, e2, mustCreate(t, e2, messages.JobSpec{RackID: "r1", NodeID: "a"}, completes("Completed", "{}")).ID)
}

// TestAbandonStopsWorkflowsRefusesAdmissionAndWritesNothing: Abandon
// refuses admission from its start, cancels the running workflows with its
// cause, waits for them to return, and writes nothing more to the journal
// (their failures included); a replay of the journal then finds the jobs
// unfinished. Close afterwards does nothing.
func TestAbandonStopsWorkflowsRefusesAdmissionAndWritesNothing(t *testing.T) {
	st := journalBackends[0].open(t)
	j := &recordingJournal{Journal: st}
	e, _ := newEngine(t, Options{Journal: j})

	done := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "done"}, completes("Completed", "{}"))
	waitTerminal(t, e, done.ID)
	g := newGate()
	quick := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "a"}, g)
	causes := make(chan error, 2)
	release := make(chan struct{})
	slow := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "b"}, messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("waiting at gate")
		g.started <- job.ID()
		<-ctx.Done()
		causes <- context.Cause(ctx)
		<-release // returns only when the test lets it
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "stopped"))
	}))
	g.waitRunning(t, e, 2)
	if n := e.InFlight(); n != 2 {
		t.Errorf("in flight before Abandon = %d, want 2", n)
	}
	writes := j.writeCount()
	stored, err := st.ReadEvents(testCtx(t), 0, 0)
	if err != nil {
		t.Fatal(err)
	}

	cause := errors.New("rack r: lease lost")
	abandoned := make(chan struct{})
	go func() {
		defer close(abandoned)
		e.Abandon(cause)
	}()
	select {
	case got := <-causes:
		if !errors.Is(got, cause) {
			t.Errorf("the workflow's context cause = %v, want %v", got, cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Abandon did not cancel the running workflow")
	}
	// The slow workflow has not returned: Abandon is still waiting, and
	// refuses admission meanwhile.
	_, err = e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "c"}, completes("Completed", "{}"), nil)
	if !errors.Is(err, messages.ErrNotOwner) || !errors.Is(err, messages.ErrStoreUnavailable) {
		t.Errorf("create during Abandon = %v, want ErrNotOwner and ErrStoreUnavailable", err)
	}
	select {
	case <-abandoned:
		t.Fatal("Abandon returned before the slow workflow did")
	default:
	}
	close(release)
	select {
	case <-abandoned:
	case <-time.After(DefaultCloseTimeout + 10*time.Second):
		t.Fatal("Abandon did not return once the workflows had")
	}

	_, err = e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "d"}, completes("Completed", "{}"), nil)
	if !errors.Is(err, messages.ErrNotOwner) {
		t.Errorf("create after Abandon = %v, want ErrNotOwner", err)
	}
	e.Close() // a no-op: it must neither seal nor write anything
	if got := j.writeCount(); got != writes {
		t.Errorf("the journal got %d writes after Abandon began, want none", got-writes)
	}
	after, err := st.ReadEvents(testCtx(t), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(stored) {
		t.Errorf("the journal holds %d rows after Abandon, %d before: Abandon must write nothing", len(after), len(stored))
	}
	// What was journaled before is intact: a new engine finds the two jobs
	// unfinished and seals them, the finished one as it was.
	e2, _ := newEngine(t, Options{Journal: st})
	for _, id := range []string{quick.ID, slow.ID} {
		if s := mustGet(t, e2, id); s.State != messages.StateFailed || s.ErrorCode != messages.ErrorInternal {
			t.Errorf("job %s replayed after Abandon = %+v, want interrupted", id, s)
		}
	}
	if s := mustGet(t, e2, done.ID); s.State != messages.StateCompleted {
		t.Errorf("finished job replayed after Abandon = %+v", s)
	}
}

// TestAbandonWithoutJournalOrJobsReturnsAtOnce: an engine with nothing in
// flight and no journal is abandoned at once, and refuses admission.
func TestAbandonWithoutJournalOrJobsReturnsAtOnce(t *testing.T) {
	e, _ := newEngine(t, Options{})
	if n := e.InFlight(); n != 0 {
		t.Errorf("in flight on a new engine = %d", n)
	}
	e.Abandon(nil)
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "a"}, completes("Completed", "{}"), nil)
	if !errors.Is(err, messages.ErrNotOwner) {
		t.Errorf("create after Abandon = %v, want ErrNotOwner", err)
	}
}

// TestInFlightCountsUnfinishedJobsWithoutReservations: a batch parent and
// its running children count, a reserving job counts once (its
// reservation children do not), and finished jobs do not.
func TestInFlightCountsUnfinishedJobsWithoutReservations(t *testing.T) {
	e, _ := newEngine(t, Options{})
	g := newGate()
	mustBatch(t, e, messages.TypeFirmwareUpdate, []messages.BatchTarget{
		{RackID: "r1", NodeID: "a", Workflow: g}, {RackID: "r1", NodeID: "b", Workflow: g},
	})
	if _, err := e.CreateReserved(testCtx(t), messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r2"}, g,
		&messages.Reservation{HoldRack: true, Nodes: []messages.NodeRef{{RackID: "r2", NodeID: "x"}, {RackID: "r2", NodeID: "y"}}}); err != nil {
		t.Fatal(err)
	}
	g.waitRunning(t, e, 3)
	eventually(t, "4 jobs in flight (a parent, 2 children, a reserving job)", func() bool { return e.InFlight() == 4 })
	close(g.release)
	eventually(t, "nothing in flight once the workflows end", func() bool { return e.InFlight() == 0 })
}

// TestJournalRowsNameTheJobsTheyCreate: the rows an admission writes name
// every job it created (a single job; a batch's parent and children; a
// reserving job and its reservation children) and no other.
func TestJournalRowsNameTheJobsTheyCreate(t *testing.T) {
	st := journalBackends[0].open(t)
	j := &recordingJournal{Journal: st}
	e, _ := newEngine(t, Options{Journal: j})
	one := mustCreate(t, e, messages.JobSpec{RackID: "r1", NodeID: "a"}, completes("Completed", "{}"))
	waitTerminal(t, e, one.ID)
	if got := j.jobsNamed(); !slices.Equal(got, []string{one.ID}) {
		t.Errorf("rows of a single job name %v, want [%s]", got, one.ID)
	}

	batch := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(completes("Completed", "{}"), "r1", "b", "r1", "c", "r2", "a"))
	want := []string{one.ID, batch.Parent.ID}
	want = append(want, ids(batch.Admitted)...)
	waitTerminal(t, e, batch.Parent.ID)

	rep, err := e.CreateReserved(testCtx(t), messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r3"}, completes("Completed", "{}"),
		&messages.Reservation{HoldRack: true, Nodes: []messages.NodeRef{{RackID: "r3", NodeID: "x"}, {RackID: "r3", NodeID: "y"}}})
	if err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, e, rep.Job.ID)
	family, err := e.Get(testCtx(t), rep.Job.ID, true)
	if err != nil || len(family) != 3 {
		t.Fatalf("reserving job and children = %+v, %v", family, err)
	}
	want = append(want, ids(family)...)
	slices.Sort(want)
	if got := j.jobsNamed(); !slices.Equal(got, want) {
		t.Errorf("rows name jobs\n%v\nwant\n%v", got, want)
	}
}

// TestEncodeRowsNameOnlyTheirOwnJobs: a batch of events longer than a row
// is split, each row naming the jobs created by its own events.
func TestEncodeRowsNameOnlyTheirOwnJobs(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var evs []messages.Event
	for i := range eventsPerRow + 2 {
		id := fmt.Sprintf("job-%04d", i)
		evs = append(evs, messages.JobCreated{ID: id, RackID: "r", NodeID: id, At: at},
			messages.JobStarted{ID: id, At: at})
	}
	rows, err := encodeRows(evs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d events in %d rows, want 3", len(evs), len(rows))
	}
	for i, row := range rows {
		decoded, err := decodeRow(row)
		if err != nil {
			t.Fatal(err)
		}
		var created []string
		for _, ev := range decoded {
			if c, ok := ev.(messages.JobCreated); ok {
				created = append(created, c.ID)
			}
		}
		if !slices.Equal(row.Jobs, created) {
			t.Errorf("row %d names %v, its JobCreated events are of %v", i, row.Jobs, created)
		}
	}
}
