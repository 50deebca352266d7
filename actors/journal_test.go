package actors

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
	"github.com/rmsd/rmsd/test/syncbuf"
)

// journalBackends are the stores the journal tests run on: SQLite always,
// PostgreSQL when a server is reachable (see storetest.TempPostgresDatabase).
var journalBackends = []struct {
	name string
	open func(t testing.TB) store.Store
}{
	{"sqlite", func(t testing.TB) store.Store {
		return openJournalStore(t, func(ctx context.Context) (store.Store, error) {
			return sqlstore.OpenSQLite(ctx, filepath.Join(t.TempDir(), "rmsd.db"), sqlstore.Options{})
		})
	}},
	{"postgres", func(t testing.TB) store.Store {
		url := storetest.TempPostgresDatabase(t)
		return openJournalStore(t, func(ctx context.Context) (store.Store, error) {
			return sqlstore.OpenPostgres(ctx, url, 4, sqlstore.Options{})
		})
	}},
}

func openJournalStore(t testing.TB, open func(context.Context) (store.Store, error)) store.Store {
	t.Helper()
	s, err := open(testCtx(t))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// errCut is what a cut journal answers.
var errCut = errors.New("test: store cut off")

// cutJournal is a store.Journal in front of a real one that a test can cut
// off (every call fails, as a dead database or a killed process would
// leave it), hold (writes block until released) and count.
type cutJournal struct {
	store.Journal
	cut     atomic.Bool
	commits atomic.Int64 // successful appends and compactions
	rows    atomic.Int64 // rows they wrote

	mu      sync.Mutex
	hold    chan struct{} // non-nil: writes wait for it to close
	holding chan struct{} // closed when a write waits on hold
}

func (c *cutJournal) gate(ctx context.Context) error {
	c.mu.Lock()
	hold, holding := c.hold, c.holding
	c.mu.Unlock()
	if hold != nil {
		select {
		case <-holding:
		default:
			close(holding)
		}
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if c.cut.Load() {
		return errCut
	}
	return nil
}

// holdWrites makes every write wait until the returned release is called;
// the channel closes once a write is waiting.
func (c *cutJournal) holdWrites() (waiting <-chan struct{}, release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	hold, holding := make(chan struct{}), make(chan struct{})
	c.hold, c.holding = hold, holding
	return holding, func() {
		c.mu.Lock()
		c.hold = nil
		c.mu.Unlock()
		close(hold)
	}
}

func (c *cutJournal) AppendEvents(ctx context.Context, evs []store.Event) ([]store.Event, error) {
	if err := c.gate(ctx); err != nil {
		return nil, err
	}
	out, err := c.Journal.AppendEvents(ctx, evs)
	if err == nil {
		c.commits.Add(1)
		c.rows.Add(int64(len(evs)))
	}
	return out, err
}

func (c *cutJournal) CompactEvents(ctx context.Context, evs []store.Event) ([]store.Event, error) {
	if err := c.gate(ctx); err != nil {
		return nil, err
	}
	out, err := c.Journal.CompactEvents(ctx, evs)
	if err == nil {
		c.commits.Add(1)
		c.rows.Add(int64(len(evs)))
	}
	return out, err
}

func (c *cutJournal) ReadEvents(ctx context.Context, after int64, limit int) ([]store.Event, error) {
	if c.cut.Load() {
		return nil, errCut
	}
	return c.Journal.ReadEvents(ctx, after, limit)
}

// blocks is a workflow that reports nothing and ends only when cancelled.
var blocks = messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
	<-ctx.Done()
	_ = job.Fail(messages.NewFailure(messages.ErrorOther, "cancelled"))
})

// TestJournalRestartBringsBackJobsAndInterruptsTheRest runs jobs on one
// engine, "kills" it (its journal cut off, so nothing it does afterwards
// reaches the store) and starts a second engine on the same store: every
// job is back, finished ones as they were, running ones Failed with the
// interruption reason, parents re-aggregated, no node held, and the log
// names the nodes that were mid-operation.
func TestJournalRestartBringsBackJobsAndInterruptsTheRest(t *testing.T) {
	for _, b := range journalBackends {
		t.Run(b.name, func(t *testing.T) {
			st := b.open(t)
			first := &cutJournal{Journal: st}
			e1, _ := newEngine(t, Options{Journal: first})

			done := mustCreate(t, e1, messages.JobSpec{RackID: "r1", NodeID: "done"}, completes("Completed", `{"status":"completed"}`))
			failed := mustCreate(t, e1, messages.JobSpec{RackID: "r1", NodeID: "failed"}, fails(messages.ErrorTimeout, "BMC did not answer"))
			waitTerminal(t, e1, done.ID, failed.ID)
			g := newGate()
			running := mustCreate(t, e1, messages.JobSpec{RackID: "r1", NodeID: "busy"}, g)
			batch := mustBatch(t, e1, messages.TypeFirmwareUpdate, []messages.BatchTarget{
				{RackID: "r2", NodeID: "a", Workflow: completes("Completed", `{"status":"completed"}`)},
				{RackID: "r2", NodeID: "b", Workflow: g},
				{RackID: "r2", NodeID: "c", Workflow: g},
			})
			reboot, err := e1.CreateReserved(testCtx(t), messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r3"}, g,
				&messages.Reservation{HoldRack: true, Nodes: []messages.NodeRef{{RackID: "r3", NodeID: "shelf-1"}, {RackID: "r3", NodeID: "tray-1"}}})
			if err != nil {
				t.Fatalf("create reserved: %v", err)
			}
			g.waitRunning(t, e1, 4)
			waitTerminal(t, e1, batch.Admitted[0].ID)
			// Every state read here was durable when it was answered.
			before := map[string]messages.JobSnapshot{}
			for _, id := range []string{done.ID, failed.ID, running.ID, batch.Parent.ID, reboot.Job.ID} {
				jobs, err := e1.Get(testCtx(t), id, true)
				if err != nil {
					t.Fatal(err)
				}
				for _, j := range jobs {
					before[j.ID] = j
				}
			}
			if s := before[running.ID]; s.State != messages.StateRunning || s.Description != "waiting at gate" {
				t.Fatalf("running job before the kill: %+v", s)
			}

			first.cut.Store(true) // kill -9: nothing after this reaches the store
			close(g.release)      // what the dying process still does is lost
			waitTerminal(t, e1, running.ID)

			var logs syncbuf.Buffer
			e2, _ := newEngine(t, Options{Journal: st, Logger: zerolog.New(&logs)})
			for id, was := range before {
				got := mustGet(t, e2, id)
				switch {
				case was.State.IsTerminal():
					if got.State != was.State || got.ErrorMessage != was.ErrorMessage || got.ResultJSON != was.ResultJSON ||
						got.Description != was.Description || !got.UpdatedAt.Equal(was.UpdatedAt) || len(got.ChildIDs) != len(was.ChildIDs) {
						t.Errorf("terminal job %s after restart:\n%+v\nbefore:\n%+v", id, got, was)
					}
				case was.ParentID == reboot.Job.ID:
					if got.State != messages.StateCompleted {
						t.Errorf("reservation %s after restart: %+v, want completed with its parent", id, got)
					}
				case id == batch.Parent.ID:
					if got.State != messages.StateFailed || !strings.Contains(got.ErrorMessage, "2") {
						t.Errorf("batch parent after restart: %+v, want failed from its two interrupted children", got)
					}
				default:
					want := `interrupted by restart of rmsd at stage "waiting at gate"; the state of the hardware is unknown`
					if got.State != messages.StateFailed || got.ErrorCode != messages.ErrorInternal || got.ErrorMessage != want {
						t.Errorf("job %s after restart: %+v, want Failed/Internal %q", id, got, want)
					}
				}
			}
			// No node stays held: new jobs on every node (and the rack) are admitted.
			var fresh []string
			for _, n := range []messages.JobSpec{{RackID: "r1", NodeID: "busy"}, {RackID: "r2", NodeID: "b"}, {RackID: "r3", NodeID: "tray-1"}} {
				fresh = append(fresh, mustCreate(t, e2, n, completes("Completed", "{}")).ID)
			}
			// The rack's power domain is free once those new jobs end.
			waitTerminal(t, e2, fresh...)
			if _, err := e2.CreateReserved(testCtx(t), messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r3"}, completes("Completed", "{}"),
				&messages.Reservation{HoldRack: true, Nodes: []messages.NodeRef{{RackID: "r3", NodeID: "shelf-1"}}}); err != nil {
				t.Errorf("a cold reboot of the interrupted rack after restart: %v", err)
			}
			log := logs.String()
			for _, want := range []string{"jobs interrupted by restart of rmsd", "r1/busy", "r2/b", "r2/c", "r3/shelf-1", "r3/tray-1"} {
				if !strings.Contains(log, want) {
					t.Errorf("start-up log lacks %q:\n%s", want, log)
				}
			}
		})
	}
}

// TestJournalBatchAdmissionIsAFewCommits: a 1,000-child batch is admitted
// in a handful of commits, and its reply comes only once they are durable.
func TestJournalBatchAdmissionIsAFewCommits(t *testing.T) {
	st := journalBackends[0].open(t)
	j := &cutJournal{Journal: st}
	e, _ := newEngine(t, Options{Journal: j})
	ts := make([]messages.BatchTarget, 1000)
	for i := range ts {
		ts[i] = messages.BatchTarget{RackID: "r", NodeID: "n" + string(rune('a'+i%26)) + "-" + itoa(i), Workflow: blocks}
	}
	before := j.commits.Load()
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, ts)
	commits := j.commits.Load() - before
	if len(rep.Admitted) != 1000 {
		t.Fatalf("admitted %d children", len(rep.Admitted))
	}
	if commits < 1 || commits > 3 {
		t.Errorf("admitting 1,000 children took %d commits, want 1 to 3", commits)
	}
	rows, err := st.ReadEvents(testCtx(t), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	for _, r := range rows {
		evs, err := decodeRow(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if _, ok := ev.(messages.JobCreated); ok {
				n++
			}
		}
	}
	if n != 1001 { // the parent and every child (their holds and attachments are implied)
		t.Errorf("journal holds %d job creations after the admission reply, want 1001", n)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestJournalReplyWaitsForTheWrite: while the journal write is held, the
// caller of an admission gets no job id; once it is written, it does.
func TestJournalReplyWaitsForTheWrite(t *testing.T) {
	st := journalBackends[0].open(t)
	j := &cutJournal{Journal: st}
	e, _ := newEngine(t, Options{Journal: j})
	waiting, release := j.holdWrites()
	type result struct {
		snap messages.JobSnapshot
		err  error
	}
	got := make(chan result, 1)
	go func() {
		s, err := e.Create(context.Background(), messages.JobSpec{RackID: "r", NodeID: "n"}, blocks, nil)
		got <- result{s, err}
	}()
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the admission never reached the journal")
	}
	select {
	case r := <-got:
		t.Fatalf("admission answered (%+v, %v) while its journal write was held", r.snap, r.err)
	default:
	}
	release()
	select {
	case r := <-got:
		if r.err != nil {
			t.Fatalf("create: %v", r.err)
		}
		rows, err := st.ReadEvents(testCtx(t), 0, 0)
		if err != nil || len(rows) == 0 || !strings.Contains(string(rows[0].Data), r.snap.ID) {
			t.Fatalf("journal after the reply: %d rows, %v; want the job %s in it", len(rows), err, r.snap.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("admission not answered after its write")
	}
}

// TestJournalStoreFailureRefusesJobsAndRecovers: with the store cut off,
// new jobs are refused with ErrStoreUnavailable while reads answer from
// memory; once it is back, admission resumes and what happened meanwhile
// is in the journal.
func TestJournalStoreFailureRefusesJobsAndRecovers(t *testing.T) {
	st := journalBackends[0].open(t)
	j := &cutJournal{Journal: st}
	e, _ := newEngine(t, Options{Journal: j})
	g := newGate()
	held := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "held"}, g)
	g.waitRunning(t, e, 1)

	j.cut.Store(true)
	// The first admission after the cut fails on its write (or is refused
	// if the writer already knows); either way no id is handed out.
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "a"}, blocks, nil)
	if !errors.Is(err, messages.ErrStoreUnavailable) {
		t.Fatalf("create with the store cut off: %v, want ErrStoreUnavailable", err)
	}
	_, err = e.CreateBatch(testCtx(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate}, targets(blocks, "r", "b"), nil)
	if !errors.Is(err, messages.ErrStoreUnavailable) || !strings.Contains(err.Error(), "job store unavailable") {
		t.Fatalf("create batch with the store cut off: %v, want a clear ErrStoreUnavailable", err)
	}
	if s := mustGet(t, e, held.ID); s.State != messages.StateRunning {
		t.Fatalf("read from memory while the store is cut off: %+v", s)
	}
	close(g.release) // a state change during the outage
	waitTerminal(t, e, held.ID)

	j.cut.Store(false)
	// The writer retries its backlog on its own; admission resumes once it
	// is written.
	eventually(t, "the journal is written again", func() bool { return !e.core.journal.unavailable() })
	again := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "c"}, completes("Completed", "{}"))
	waitTerminal(t, e, again.ID)
	// A fresh engine on the store sees the outage's changes.
	e.Close()
	e2, _ := newEngine(t, Options{Journal: st})
	if s := mustGet(t, e2, held.ID); s.State != messages.StateCompleted {
		t.Errorf("job completed during the outage, after restart: %+v", s)
	}
	if s := mustGet(t, e2, again.ID); s.State != messages.StateCompleted {
		t.Errorf("job admitted after recovery, after restart: %+v", s)
	}
	for _, n := range []string{"a", "b"} { // refused admissions left nothing held
		mustCreate(t, e2, messages.JobSpec{RackID: "r", NodeID: n}, completes("Completed", "{}"))
	}
}

// TestJournalPostgresOutageRefusesJobsAndRecovers cuts the connection to
// PostgreSQL (a proxy in front of the shared server, not the server
// itself): admission answers ErrStoreUnavailable with a clear message,
// reads answer from memory, and when the connection is back admission
// resumes and the journal has what happened meanwhile.
func TestJournalPostgresOutageRefusesJobsAndRecovers(t *testing.T) {
	dbURL := storetest.TempPostgresDatabase(t)
	proxy, viaProxy := storetest.ProxyPostgres(t, dbURL)
	st := openJournalStore(t, func(ctx context.Context) (store.Store, error) {
		return sqlstore.OpenPostgres(ctx, viaProxy, 4, sqlstore.Options{})
	})
	e, _ := newEngine(t, Options{Journal: st})
	g := newGate()
	held := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "held"}, g)
	g.waitRunning(t, e, 1)

	proxy.Cut()
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "a"}, blocks, nil)
	if !errors.Is(err, messages.ErrStoreUnavailable) || !strings.Contains(err.Error(), "job store unavailable") {
		t.Fatalf("create with PostgreSQL cut off: %v, want a clear ErrStoreUnavailable", err)
	}
	if s := mustGet(t, e, held.ID); s.State != messages.StateRunning {
		t.Fatalf("read from memory during the outage: %+v", s)
	}
	close(g.release)
	waitTerminal(t, e, held.ID)

	proxy.Restore()
	eventually(t, "the journal is written again", func() bool { return !e.core.journal.unavailable() })
	again := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "c"}, completes("Completed", "{}"))
	waitTerminal(t, e, again.ID)
	e.Close()

	direct := openJournalStore(t, func(ctx context.Context) (store.Store, error) {
		return sqlstore.OpenPostgres(ctx, dbURL, 4, sqlstore.Options{})
	})
	e2, _ := newEngine(t, Options{Journal: direct})
	for _, id := range []string{held.ID, again.ID} {
		if s := mustGet(t, e2, id); s.State != messages.StateCompleted {
			t.Errorf("job %s after the outage and a restart: %+v", id, s)
		}
	}
	mustCreate(t, e2, messages.JobSpec{RackID: "r", NodeID: "a"}, completes("Completed", "{}"))
}

// TestJournalWritesWhatQueuedDuringAWriteTogetherInOrder: admissions made
// while one write is in flight go to the journal together in the next
// commit, after it, in the order the registry applied them.
func TestJournalWritesWhatQueuedDuringAWriteTogetherInOrder(t *testing.T) {
	st := journalBackends[0].open(t)
	j := &cutJournal{Journal: st}
	e, _ := newEngine(t, Options{Journal: j})
	waiting, release := j.holdWrites()
	created := make(chan messages.JobSnapshot, 3)
	create := func(node string) {
		s, err := e.Create(context.Background(), messages.JobSpec{ID: "job-" + node, RackID: "r", NodeID: node}, blocks, nil)
		if err != nil {
			t.Errorf("create %s: %v", node, err)
		}
		created <- s
	}
	go create("1")
	<-waiting // job 1's events are being written
	go create("2")
	go create("3")
	eventually(t, "jobs 2 and 3 queued behind the write", func() bool { return e.core.journal.last() == 3 }) // a creation each (their holds are implied)
	before := j.commits.Load()
	release()
	for range 3 {
		select {
		case <-created:
		case <-time.After(10 * time.Second):
			t.Fatal("an admission was never answered")
		}
	}
	if n := j.commits.Load() - before; n != 2 {
		t.Errorf("%d commits for the held write and what queued behind it, want 2", n)
	}
	rows, err := st.ReadEvents(testCtx(t), 0, 0)
	if err != nil || len(rows) != 2 {
		t.Fatalf("journal: %d rows, %v; want 2", len(rows), err)
	}
	var order []string
	for i, r := range rows {
		evs, err := decodeRow(r)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if c, ok := ev.(messages.JobCreated); ok {
				order = append(order, fmt.Sprint(i, ":", c.ID))
			}
		}
	}
	if len(order) != 3 || order[0] != "0:job-1" || !strings.HasPrefix(order[1], "1:") || !strings.HasPrefix(order[2], "1:") {
		t.Errorf("creations in the journal by row: %v; want job-1 alone, then the other two together", order)
	}
}

// jobActorOf waits for the job actor the registry spawned for an admission
// whose answer is still held, and returns the job's id. The workflow must
// not have started meanwhile.
func jobActorOf(t *testing.T, e *Engine, started <-chan struct{}) string {
	t.Helper()
	var id string
	eventually(t, "the job's actor is spawned", func() bool {
		select {
		case <-started:
			t.Fatal("the workflow ran while its admission was not yet in the journal")
		default:
		}
		for _, a := range listed(t, e).Actors {
			if a.Kind == "job" {
				id = a.JobID
				return true
			}
		}
		return false
	})
	return id
}

// heldAdmission is an admission on node r/n whose journal write is held:
// its job's actor is spawned, its workflow (which completes at once) has
// not started, its caller has no answer yet.
type heldAdmission struct {
	e       *Engine
	j       *cutJournal
	id      string
	started chan struct{} // closed when the workflow starts
	got     chan error    // the admission's answer
	release func()        // lets the journal write go
}

func startHeldAdmission(t *testing.T) heldAdmission {
	t.Helper()
	h := heldAdmission{j: &cutJournal{Journal: journalBackends[0].open(t)}, started: make(chan struct{}), got: make(chan error, 1)}
	h.e, _ = newEngine(t, Options{Journal: h.j})
	var waiting <-chan struct{}
	waiting, h.release = h.j.holdWrites()
	wf := messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		close(h.started)
		_ = job.Complete("Completed", "{}")
	})
	go func() {
		_, err := h.e.Create(context.Background(), messages.JobSpec{RackID: "r", NodeID: "n"}, wf, nil)
		h.got <- err
	}()
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the admission never reached the journal")
	}
	h.id = jobActorOf(t, h.e, h.started)
	return h
}

// TestJournalWorkflowWaitsUntilItsJobIsDurable: while the admission's
// journal write is held, the job's actor exists but its workflow has not
// run; once the write is done, it runs. A job a restart could not bring
// back never touches hardware.
func TestJournalWorkflowWaitsUntilItsJobIsDurable(t *testing.T) {
	h := startHeldAdmission(t)
	e, id, started, got, release := h.e, h.id, h.started, h.got, h.release
	// A bound on a negative, not a synchronisation: before this change the
	// workflow ran within microseconds of its actor's spawn.
	select {
	case <-started:
		t.Fatalf("job %s ran its workflow while its admission was not yet in the journal", id)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the workflow never ran after its admission was written")
	}
	if err := <-got; err != nil {
		t.Fatalf("create: %v", err)
	}
	waitTerminal(t, e, id)
	if s := mustGet(t, e, id); s.State != messages.StateCompleted {
		t.Fatalf("job after its workflow: %+v", s)
	}
}

// TestJournalJobWhoseAdmissionIsLostNeverRuns: an admission whose journal
// write fails is refused to its caller, and its job ends Failed without
// its workflow ever running; its node is free again.
func TestJournalJobWhoseAdmissionIsLostNeverRuns(t *testing.T) {
	h := startHeldAdmission(t)
	e, j, id, started, got, release := h.e, h.j, h.id, h.started, h.got, h.release
	j.cut.Store(true)
	release()
	if err := <-got; !errors.Is(err, messages.ErrStoreUnavailable) {
		t.Fatalf("create whose write failed: %v, want ErrStoreUnavailable", err)
	}
	waitTerminal(t, e, id)
	s := mustGet(t, e, id)
	if s.State != messages.StateFailed || !strings.Contains(s.ErrorMessage, "cancelled before it started") {
		t.Fatalf("job whose admission was lost: %+v, want Failed before it started", s)
	}
	select {
	case <-started:
		t.Fatal("the workflow of a job whose admission was lost ran")
	default:
	}
	j.cut.Store(false)
	eventually(t, "the journal is written again", func() bool { return !e.core.journal.unavailable() })
	again := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", "{}"))
	waitTerminal(t, e, again.ID)
}

// TestJournalParentReadWaitsForItsChildsEnd: a batch parent's status shows
// its children's progress, so a read of the parent waits until a child's
// end is in the journal, as a read of the child itself does.
func TestJournalParentReadWaitsForItsChildsEnd(t *testing.T) {
	j := &cutJournal{Journal: journalBackends[0].open(t)}
	e, _ := newEngine(t, Options{Journal: j})
	g := newGate()
	b := mustBatch(t, e, messages.TypeFirmwareUpdate, []messages.BatchTarget{
		{RackID: "r", NodeID: "a", Workflow: g}, {RackID: "r", NodeID: "b", Workflow: blocks}})
	child := g.waitStarted(t, 1)[0]
	waiting, release := j.holdWrites()
	close(g.release) // the child ends; its end waits for the journal
	eventually(t, "the child's end is applied", func() bool {
		for _, a := range listed(t, e).Actors {
			if a.JobID == child {
				return false
			}
		}
		return true
	})
	<-waiting
	got := make(chan messages.JobSnapshot, 1)
	go func() {
		jobs, err := e.Get(context.Background(), b.Parent.ID, false)
		if err != nil || len(jobs) != 1 {
			jobs = []messages.JobSnapshot{{Description: fmt.Sprintf("read failed: %v", err)}}
		}
		got <- jobs[0]
	}()
	// A bound on a negative, not a synchronisation: before this change the
	// parent was answered at once, showing the child's end.
	select {
	case s := <-got:
		t.Fatalf("parent answered (%q) while its child's end was not yet in the journal", s.Description)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	select {
	case s := <-got:
		if !strings.Contains(s.Description, "(1/2 complete") {
			t.Errorf("parent after the write: %q, want one of two children complete", s.Description)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("parent never answered after the write")
	}
}
