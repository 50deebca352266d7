package actors

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

func TestTerminalJobsNeverBlockAdmission(t *testing.T) {
	e, _ := newEngine(t, Options{MaxTrackedJobs: 5, TerminalJobTTL: time.Hour})
	var all []string
	for i := range 20 { // four times the limit, each failing at once
		s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: fmt.Sprint(i)}, fails(messages.ErrorOther, "unreachable"))
		waitTerminal(t, e, s.ID)
		all = append(all, s.ID)
	}
	for i, id := range all {
		if want := i >= len(all)-5; gone(t, e, id) == want {
			t.Errorf("job %d present=%v, want the five newest kept", i, !want)
		}
	}
}

func TestCapacityRefusalNamesTheJobsInFlight(t *testing.T) {
	e, _ := newEngine(t, Options{MaxTrackedJobs: 4, TerminalJobTTL: time.Hour})
	done := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "done"}, completes("Completed", ""))
	waitTerminal(t, e, done.ID)
	g := newGate()
	rep := mustBatch(t, e, messages.TypeSwitchSystemPasswordUpdate, targets(g, "r", "a", "r", "b"))
	x := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "x"}, g) // evicts the terminal job
	if !gone(t, e, done.ID) {
		t.Fatal("the terminal job was not evicted for the admission")
	}
	_, err := e.Create(testCtx(t), messages.JobSpec{RackID: "r", NodeID: "y"}, g, nil)
	ref := refusal(t, err, messages.ErrAtCapacity)
	want := "job tracker at capacity: 4 jobs in flight (limit 4; job: 1, switch_system_password_update: 3); retry after in-flight jobs finish"
	if ref.Message != want || ref.Code != messages.ErrorInternal {
		t.Fatalf("refusal %q (%v), want %q", ref.Message, ref.Code, want)
	}
	close(g.release)
	waitTerminal(t, e, x.ID, rep.Parent.ID)
	mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "y"}, completes("Completed", ""))
}

func TestCapacityEvictsABatchParentWithItsChildren(t *testing.T) {
	e, _ := newEngine(t, Options{MaxTrackedJobs: 4, TerminalJobTTL: time.Hour})
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(completes("Completed", "{}"), "r", "a", "r", "b"))
	waitTerminal(t, e, rep.Parent.ID)
	waitTerminal(t, e, ids(rep.Admitted)...)
	solo := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "solo"}, completes("Completed", ""))
	waitTerminal(t, e, solo.ID)
	x := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "x"}, completes("Completed", ""))
	for _, id := range append(ids(rep.Admitted), rep.Parent.ID) {
		if !gone(t, e, id) {
			t.Errorf("job %s of the oldest batch still present", id)
		}
	}
	mustGet(t, e, solo.ID)
	waitTerminal(t, e, x.ID)
}

// storeOf builds a store from events, failing on one that does not apply.
func storeOf(t *testing.T, evs ...messages.Event) *jobStore {
	t.Helper()
	s := newJobStore()
	for _, ev := range evs {
		if err := s.apply(ev); err != nil {
			t.Fatalf("apply %T: %v", ev, err)
		}
	}
	return s
}

func evicted(evs []messages.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.(messages.JobEvicted).ID)
	}
	return out
}

func TestCapacityEvictionOrder(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	s := storeOf(t,
		messages.JobCreated{ID: "p", Type: messages.TypeFirmwareUpdate, State: messages.StateRunning, At: at(0)},
		messages.JobCreated{ID: "c1", ParentID: "p", RackID: "r", NodeID: "1", State: messages.StateQueued, At: at(0)},
		messages.ChildAttached{ParentID: "p", ChildID: "c1", At: at(0)},
		messages.JobCreated{ID: "c2", ParentID: "p", RackID: "r", NodeID: "2", State: messages.StateQueued, At: at(0)},
		messages.ChildAttached{ParentID: "p", ChildID: "c2", At: at(0)},
		messages.JobCreated{ID: "held", RackID: "r", NodeID: "h", State: messages.StateQueued, At: at(0)},
		messages.NodeLocked{RackID: "r", NodeID: "h", Holder: "held", Since: at(0)},
		messages.JobFailed{ID: "held", At: at(1)}, // ended, its workflow still holds the node
		messages.JobFailed{ID: "c2", At: at(2)},
		messages.JobCompleted{ID: "c1", At: at(3)},
		messages.JobFailed{ID: "p", At: at(4)},
		messages.JobCreated{ID: "solo", State: messages.StateQueued, At: at(5)},
		messages.JobCompleted{ID: "solo", At: at(6)},
	)
	evs, remain := s.capacityEvictions(1, 3)
	if got := evicted(evs); !slices.Equal(got, []string{"c1", "c2", "p"}) || remain != 2 {
		t.Fatalf("evicted %v leaving %d, want the batch, children first, leaving 2", got, remain)
	}
	for _, ev := range evs {
		if err := s.apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	evs, remain = s.capacityEvictions(2, 2) // only solo can go
	if got := evicted(evs); !slices.Equal(got, []string{"solo"}) || remain != 1 {
		t.Fatalf("evicted %v leaving %d, want solo only, leaving 1", got, remain)
	}
	if s.terminal.len() != 1 || s.terminal.ids[s.terminal.head] != "held" {
		t.Fatalf("queue %v from %d: the held job must stay first", s.terminal.ids, s.terminal.head)
	}
	want := "job tracker at capacity: 1 jobs in flight (limit 2; ended but still holding nodes or in an open batch: 1); retry after in-flight jobs finish"
	if got := s.capacityRefusal(remain, 2).Message; got != want {
		t.Fatalf("refusal %q, want %q", got, want)
	}
}

func TestCapacityKeepsTheFinishedChildrenOfAnOpenBatch(t *testing.T) {
	at := time.Unix(1000, 0)
	s := storeOf(t,
		messages.JobCreated{ID: "p", Type: messages.TypeFirmwareUpdate, State: messages.StateRunning, At: at},
		messages.JobCreated{ID: "c1", ParentID: "p", RackID: "r", NodeID: "1", State: messages.StateQueued, At: at},
		messages.ChildAttached{ParentID: "p", ChildID: "c1", At: at},
		messages.JobCreated{ID: "c2", ParentID: "p", RackID: "r", NodeID: "2", State: messages.StateQueued, At: at},
		messages.ChildAttached{ParentID: "p", ChildID: "c2", At: at},
		messages.JobFailed{ID: "c1", At: at},
	)
	if evs, remain := s.capacityEvictions(1, 3); len(evs) != 0 || remain != 3 {
		t.Fatalf("evicted %v leaving %d: a child goes only with its parent", evicted(evs), remain)
	}
	if s.inFlightCount() != 2 || s.inFlight[messages.TypeFirmwareUpdate] != 2 {
		t.Fatalf("in flight %v, want the parent and its open child as firmware_update", s.inFlight)
	}
}

func TestRestoredTerminalJobsAreEvictedOldestFirst(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(1000+int64(s), 0) }
	restored := func(id string, s int) messages.JobRestored {
		return messages.JobRestored{Job: messages.JobSnapshot{ID: id, State: messages.StateCompleted, CreatedAt: at(0), UpdatedAt: at(s)}}
	}
	s := storeOf(t, restored("a", 3), restored("b", 1), restored("c", 2)) // a snapshot lists them by id
	evs, _ := s.capacityEvictions(1, 2)
	if got := evicted(evs); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("evicted %v, want the two oldest [b c]", got)
	}
}

func TestReplayedTerminalJobsDoNotBlockAdmission(t *testing.T) {
	st := journalBackends[0].open(t) // SQLite
	e1, _ := newEngine(t, Options{Journal: st, MaxTrackedJobs: 3, TerminalJobTTL: time.Hour})
	var old []string
	for i := range 3 {
		s := mustCreate(t, e1, messages.JobSpec{RackID: "r", NodeID: fmt.Sprint(i)}, fails(messages.ErrorOther, "unreachable"))
		waitTerminal(t, e1, s.ID)
		old = append(old, s.ID)
	}
	e1.Close()

	e2, _ := newEngine(t, Options{Journal: st, MaxTrackedJobs: 3, TerminalJobTTL: time.Hour})
	fresh := mustCreate(t, e2, messages.JobSpec{RackID: "r", NodeID: "new"}, completes("Completed", ""))
	if !gone(t, e2, old[0]) {
		t.Fatal("the oldest replayed terminal job was not evicted")
	}
	mustGet(t, e2, old[2])
	waitTerminal(t, e2, fresh.ID)
}
