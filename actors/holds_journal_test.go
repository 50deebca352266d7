package actors

import (
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// A job that ended while its workflow still ran holds its nodes only in
// the process that runs the workflow: after a restart no workflow runs, so
// its nodes are free and nothing is quarantined, from the journal's tail
// as from a snapshot of it.
func TestRestartFreesTheNodesOfAQuarantinedJob(t *testing.T) {
	st := journalBackends[0].open(t) // SQLite
	first := &cutJournal{Journal: st}
	e1, _ := newEngine(t, Options{Journal: first, QuarantineAfter: 20 * time.Millisecond})
	wf := newStubborn(t)
	job, err := e1.CreateReserved(testCtx(t), messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r", NodeID: "r:cold-reboot"}, wf,
		&messages.Reservation{HoldRack: true, Nodes: []messages.NodeRef{{RackID: "r", NodeID: "tray-1"}}})
	if err != nil {
		t.Fatal(err)
	}
	wf.waitStarted(t)
	e1.sys.Root.Stop(actor.NewPID(e1.sys.Address(), "job-"+job.Job.ID))
	waitTerminal(t, e1, job.Job.ID)
	quarantinedIn(t, e1, job.Job.ID)
	first.cut.Store(true) // kill -9

	e2, _ := newEngine(t, Options{Journal: st})
	if s := mustGet(t, e2, job.Job.ID); s.State != messages.StateFailed || s.Quarantined {
		t.Fatalf("job after restart %+v", s)
	}
	if l := listed(t, e2); l.HeldNodes != 0 || len(l.Quarantined) != 0 {
		t.Fatalf("after restart: %d held, quarantined %+v", l.HeldNodes, l.Quarantined)
	}
	waitTerminal(t, e2, mustCreate(t, e2, messages.JobSpec{RackID: "r", NodeID: "tray-1"}, completes("Completed", "")).ID)
}

// A snapshot of the index leaves out the holds of terminal jobs: replaying
// it holds nothing for them.
func TestSnapshotLeavesOutTheHoldsOfTerminalJobs(t *testing.T) {
	s := newJobStore()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, ev := range []messages.Event{
		messages.JobCreated{ID: "done", RackID: "r", NodeID: "a", State: messages.StateQueued, At: at},
		messages.NodeLocked{RackID: "r", NodeID: "a", Holder: "done", Since: at},
		messages.JobCreated{ID: "open", RackID: "r", NodeID: "b", State: messages.StateQueued, At: at},
		messages.NodeLocked{RackID: "r", NodeID: "b", Holder: "open", Since: at},
		messages.JobFailed{ID: "done", Code: messages.ErrorInternal, Message: "abandoned", At: at},
	} {
		if err := s.apply(ev); err != nil {
			t.Fatal(err)
		}
	}
	var locks []messages.NodeLocked
	for _, ev := range s.snapshotEvents() {
		if l, ok := ev.(messages.NodeLocked); ok {
			locks = append(locks, l)
		}
	}
	if len(locks) != 1 || locks[0].Holder != "open" {
		t.Fatalf("snapshot holds %+v, want only the open job's", locks)
	}
}
