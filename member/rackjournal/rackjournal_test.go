package rackjournal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/member/rackjournal"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
	"github.com/rmsd/rmsd/test/leakcheck"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, leakcheck.ProtoactorThrottle)
}

// wait bounds every wait on a condition: generous on a loaded machine.
const wait = 30 * time.Second

// member is one cluster member's view: its id, its store and its lease of
// the rack.
type member struct {
	id string
	st *sqlstore.Store
	mu sync.Mutex
	l  store.RackLease
	ok bool
}

func (m *member) lease() (store.RackLease, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.l, m.ok
}

func (m *member) hold(l store.RackLease) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.l, m.ok = l, true
}

// newMembers creates a database of its own for the test and opens one
// shared store on it per member id, as cluster members do.
func newMembers(t *testing.T, ids ...string) []*member {
	t.Helper()
	url := storetest.TempPostgresDatabase(t)
	out := make([]*member, len(ids))
	for i, id := range ids {
		st, err := sqlstore.OpenPostgres(t.Context(), url, 4, sqlstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		out[i] = &member{id: id, st: st}
	}
	return out
}

// take acquires rack for the member and holds the lease from then on, as
// the rack's grain does on activation; a refusal fails the test.
func (m *member) take(t *testing.T, rack string) store.RackLease {
	t.Helper()
	l, err := m.st.AcquireRack(t.Context(), rack, m.id, time.Minute)
	if err != nil {
		t.Fatalf("%s acquiring %s: %v", m.id, rack, err)
	}
	m.hold(l)
	return l
}

// journal is rack's journal written under the member's lease.
func (m *member) journal(rack string) store.Journal {
	return rackjournal.New(m.st, rack, m.lease)
}

// engine starts a job engine (newEngine) journaled in rack's stream under
// the member's lease.
func (m *member) engine(t *testing.T, rack string, opts actors.Options) *actors.Engine {
	t.Helper()
	opts.Journal = m.journal(rack)
	return newEngine(t, opts)
}

// newEngine starts a job engine on its own actor system, closed (after
// its system's shutdown order) when the test ends.
func newEngine(t *testing.T, opts actors.Options) *actors.Engine {
	t.Helper()
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	e, err := actors.New(sys, opts)
	if err != nil {
		t.Fatalf("new engine: %v", err)
	}
	t.Cleanup(func() {
		e.Close()
		sys.Shutdown()
	})
	return e
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	t.Cleanup(cancel)
	return ctx
}

// gate is a workflow that reports its stage, says it started, and
// completes once released (or fails when cancelled).
type gate struct {
	started chan string
	release chan struct{}
}

func (g *gate) Run(ctx context.Context, job messages.Reporter) {
	job.Progress("flashing the BMC")
	g.started <- job.ID()
	select {
	case <-g.release:
		_ = job.Complete("Completed by the first owner", `{"status":"completed"}`)
	case <-ctx.Done():
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "cancelled"))
	}
}

var completes = messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
	_ = job.Complete("Completed", "{}")
})

func get(t *testing.T, e *actors.Engine, id string) messages.JobSnapshot {
	t.Helper()
	jobs, err := e.Get(ctxOf(t), id, false)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return jobs[0]
}

// TestRackJournalTakeOverReplaysAndFencesTheOldEngine: member a's engine
// runs rack-1's jobs on the rack's journal; member b takes the rack under
// a new epoch and builds its engine from the same stream: it finds every
// job, the finished ones as they were and the running ones Failed with the
// cluster's message. The old engine's later writes are refused
// (store.ErrNotOwner) and never reach the stream.
func TestRackJournalTakeOverReplaysAndFencesTheOldEngine(t *testing.T) {
	ms := newMembers(t, "m-a", "m-b")
	a, b := ms[0], ms[1]
	la := a.take(t, "rack-1")
	commits := make(chan error, 64)
	e1 := a.engine(t, "rack-1", actors.Options{
		OnCommit: func(_ time.Duration, err error) {
			select {
			case commits <- err:
			default:
			}
		},
	})

	done, err := e1.Create(ctxOf(t), messages.JobSpec{RackID: "rack-1", NodeID: "tray-1"}, completes, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e1.Wait(ctxOf(t), done.ID); err != nil {
		t.Fatal(err)
	}
	g := &gate{started: make(chan string, 8), release: make(chan struct{})}
	running, err := e1.Create(ctxOf(t), messages.JobSpec{RackID: "rack-1", NodeID: "tray-2"}, g, nil)
	if err != nil {
		t.Fatal(err)
	}
	batch, err := e1.CreateBatch(ctxOf(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate}, []messages.BatchTarget{
		{RackID: "rack-1", NodeID: "tray-3", Workflow: g}, {RackID: "rack-1", NodeID: "tray-4", Workflow: g},
	}, nil)
	if err != nil || len(batch.Admitted) != 2 {
		t.Fatalf("batch: %+v, %v", batch, err)
	}
	for range 3 {
		select {
		case <-g.started:
		case <-time.After(wait):
			t.Fatal("the gated workflows did not start")
		}
	}
	// Every job reads Running at its stage: what was answered was durable.
	deadline := time.Now().Add(wait)
	for _, id := range []string{running.ID, batch.Admitted[0].ID, batch.Admitted[1].ID} {
		for s := get(t, e1, id); s.Description != "flashing the BMC"; s = get(t, e1, id) {
			if time.Now().After(deadline) {
				t.Fatalf("job %s never read at its stage: %+v", id, s)
			}
			runtime.Gosched()
		}
	}
	for _, id := range []string{done.ID, running.ID, batch.Parent.ID} {
		if rack, err := a.st.JobRack(t.Context(), id); err != nil || rack != "rack-1" {
			t.Errorf("rack of job %s = %q, %v; want rack-1", id, rack, err)
		}
	}

	// Member a's lease ends (here: released, as a lost lease would end)
	// while its engine still runs; member b takes the rack.
	if err := a.st.ReleaseRack(t.Context(), la); err != nil {
		t.Fatal(err)
	}
	if lb := b.take(t, "rack-1"); lb.Epoch <= la.Epoch {
		t.Fatalf("member b's acquisition = %+v; want an epoch above %d", lb, la.Epoch)
	}
	interrupted := func(stage string) string {
		return fmt.Sprintf("interrupted: member m-a left the cluster at stage %q; the state of the hardware is unknown", stage)
	}
	e2 := b.engine(t, "rack-1", actors.Options{Interrupted: interrupted})
	want := `interrupted: member m-a left the cluster at stage "flashing the BMC"; the state of the hardware is unknown`
	for _, id := range []string{running.ID, batch.Admitted[0].ID, batch.Admitted[1].ID} {
		if s := get(t, e2, id); s.State != messages.StateFailed || s.ErrorMessage != want {
			t.Errorf("job %s on the new owner = %+v, want Failed %q", id, s, want)
		}
	}
	if s := get(t, e2, batch.Parent.ID); s.State != messages.StateFailed {
		t.Errorf("batch parent on the new owner = %+v, want Failed from its interrupted children", s)
	}
	if s := get(t, e2, done.ID); s.State != messages.StateCompleted {
		t.Errorf("finished job on the new owner = %+v, want Completed", s)
	}

	// The old engine's workflows finish now: their writes are refused.
	for len(commits) > 0 {
		<-commits
	}
	close(g.release)
	for refused := false; !refused; {
		select {
		case err := <-commits:
			if err == nil {
				t.Fatal("the old engine committed a write after the rack was taken over")
			}
			refused = errors.Is(err, store.ErrNotOwner)
		case <-time.After(wait):
			t.Fatal("the old engine never tried to write after the takeover")
		}
	}
	_, err = e1.Create(ctxOf(t), messages.JobSpec{ID: "late-job", RackID: "rack-1", NodeID: "tray-9"}, completes, nil)
	if !errors.Is(err, messages.ErrStoreUnavailable) {
		t.Errorf("admission on the old owner = %v, want ErrStoreUnavailable", err)
	}
	e1.Abandon(errors.New("rack-1 is owned by m-b now"))
	if _, err := b.st.JobRack(t.Context(), "late-job"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rack of the refused job = %v, want ErrNotFound", err)
	}
	rows, err := b.st.ReadRackEvents(t.Context(), "rack-1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if bytes.Contains(r.Data, []byte("late-job")) || bytes.Contains(r.Data, []byte("Completed by the first owner")) {
			t.Errorf("row %d of rack-1's stream was written by the old owner after the takeover: %s", r.Seq, r.Data)
		}
	}
	// A third engine on the stream (the rack's next owner) agrees with b.
	c := &member{id: b.id, st: b.st} // b restarted
	c.take(t, "rack-1")
	e3 := c.engine(t, "rack-1", actors.Options{Interrupted: interrupted})
	if s := get(t, e3, running.ID); s.State != messages.StateFailed || s.ErrorMessage != want {
		t.Errorf("job %s replayed again = %+v, want Failed %q", running.ID, s, want)
	}
}

// TestRackJournalWithoutALeaseRefusesWrites: with no lease held, appends
// and compactions are refused with store.ErrNotOwner and nothing is
// written; reads work.
func TestRackJournalWithoutALeaseRefusesWrites(t *testing.T) {
	m := newMembers(t, "m-a")[0]
	j := m.journal("rack-1")
	ctx := t.Context()
	if _, err := j.AppendEvents(ctx, []store.Event{{Kind: "X", Jobs: []string{"job-1"}}}); !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("append without a lease = %v, want ErrNotOwner", err)
	}
	if _, err := j.CompactEvents(ctx, []store.Event{{Kind: "X"}}); !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("compact without a lease = %v, want ErrNotOwner", err)
	}
	m.take(t, "rack-2") // a lease of another rack does not do
	if _, err := j.AppendEvents(ctx, []store.Event{{Kind: "X"}}); !errors.Is(err, store.ErrNotOwner) {
		t.Errorf("append under another rack's lease = %v, want ErrNotOwner", err)
	}
	if got, err := j.ReadEvents(ctx, 0, 0); err != nil || len(got) != 0 {
		t.Errorf("rack-1's stream = %+v, %v; want nothing written", got, err)
	}
	if _, err := m.st.JobRack(ctx, "job-1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("rack of job-1 = %v, want ErrNotFound", err)
	}
	m.take(t, "rack-1")
	written, err := j.AppendEvents(ctx, []store.Event{{Kind: "X", Jobs: []string{"job-1"}}})
	if err != nil {
		t.Fatalf("append under the rack's lease: %v", err)
	}
	if got, err := j.ReadEvents(ctx, 0, 0); err != nil || len(got) != 1 || got[0].Seq != written[0].Seq {
		t.Errorf("rack-1's stream = %+v, %v; want the one event", got, err)
	}
	snap, err := j.CompactEvents(ctx, []store.Event{{Kind: "Snap"}})
	if err != nil {
		t.Fatalf("compact under the rack's lease: %v", err)
	}
	if got, err := j.ReadEvents(ctx, 0, 0); err != nil || len(got) != 1 || got[0].Seq != snap[0].Seq {
		t.Errorf("rack-1's stream after compaction = %+v, %v; want the snapshot", got, err)
	}
}
