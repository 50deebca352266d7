package actors

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

// observations records what the engine reports to Options.OnJob.
type observations struct {
	mu   sync.Mutex
	seen []messages.JobObservation
}

func (o *observations) add(ob messages.JobObservation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen = append(o.seen, ob)
}

// list returns the observations so far, sorted so that tests compare sets
// (children of a batch seal in any order).
func (o *observations) list() []messages.JobObservation {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := slices.Clone(o.seen)
	slices.SortFunc(out, func(a, b messages.JobObservation) int {
		if a.Leaf != b.Leaf {
			if a.Leaf {
				return 1
			}
			return -1
		}
		if a.State != b.State {
			return int(a.State) - int(b.State)
		}
		return int(a.Code) - int(b.Code)
	})
	return out
}

func observedEngine(t *testing.T) (*Engine, *observations) {
	t.Helper()
	obs := &observations{}
	e, _ := newEngine(t, Options{OnJob: obs.add})
	return e, obs
}

func TestObserver_LeafJobReportsAdmissionAndOutcome(t *testing.T) {
	e, obs := observedEngine(t)
	ok := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "a"}, completes("done", "{}"))
	bad := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "b"}, fails(messages.ErrorTimeout, "late"))
	waitTerminal(t, e, ok.ID, bad.ID)

	fw := messages.TypeFirmwareUpdate
	want := []messages.JobObservation{
		{Type: fw, Leaf: true, State: messages.StateQueued},
		{Type: fw, Leaf: true, State: messages.StateQueued},
		{Type: fw, Leaf: true, State: messages.StateCompleted},
		{Type: fw, Leaf: true, State: messages.StateFailed, Code: messages.ErrorTimeout},
	}
	if got := obs.list(); !slices.Equal(got, want) {
		t.Fatalf("observations\n got %+v\nwant %+v", got, want)
	}
}

func TestObserver_BatchChildrenTakeTheParentType(t *testing.T) {
	e, obs := observedEngine(t)
	img := messages.TypeSwitchSystemImageUpdate
	rep, err := e.CreateBatch(testCtx(t), messages.JobSpec{Type: img}, []messages.BatchTarget{
		{RackID: "r", NodeID: "sw-1", Workflow: completes("done", "{}")},
		{RackID: "r", NodeID: "sw-2", Workflow: fails(messages.ErrorOther, "boom")},
	}, nil)
	if err != nil || rep.Err != nil {
		t.Fatalf("create batch: %v %v", err, rep.Err)
	}
	waitTerminal(t, e, rep.Parent.ID)

	want := []messages.JobObservation{
		{Type: img, Leaf: false, State: messages.StateQueued},
		{Type: img, Leaf: false, State: messages.StateFailed, Code: mustGet(t, e, rep.Parent.ID).ErrorCode},
		{Type: img, Leaf: true, State: messages.StateQueued},
		{Type: img, Leaf: true, State: messages.StateQueued},
		{Type: img, Leaf: true, State: messages.StateCompleted},
		{Type: img, Leaf: true, State: messages.StateFailed, Code: messages.ErrorOther},
	}
	if got := obs.list(); !slices.Equal(got, want) {
		t.Fatalf("observations\n got %+v\nwant %+v", got, want)
	}
}

func TestObserver_ReservationsAreNotReportedAndLoadCountsHolds(t *testing.T) {
	e, obs := observedEngine(t)
	g := newGate()
	cold := messages.TypeColdRebootSequence
	rep, err := e.CreateReserved(testCtx(t), messages.JobSpec{Type: cold, RackID: "r", NodeID: "r:cold-reboot"}, g,
		&messages.Reservation{HoldRack: true, Nodes: []messages.NodeRef{{RackID: "r", NodeID: "a"}, {RackID: "r", NodeID: "b"}}})
	if err != nil || rep.Err != nil {
		t.Fatalf("create reserved: %v %v", err, rep.Err)
	}
	g.waitStarted(t, 1)
	mustGet(t, e, rep.Job.ID) // a registry turn after admission: Load is published
	// The coordinator and its two reservation children; its node, the rack
	// and the two reserved nodes.
	if jobs, held := e.Load(); jobs != 3 || held != 4 {
		t.Fatalf("Load() = %d jobs, %d held; want 3, 4", jobs, held)
	}
	close(g.release)
	waitTerminal(t, e, rep.Job.ID)
	mustGet(t, e, rep.Job.ID)
	if jobs, held := e.Load(); jobs != 3 || held != 0 {
		t.Fatalf("after the job: Load() = %d jobs, %d held; want 3, 0", jobs, held)
	}

	want := []messages.JobObservation{
		{Type: cold, Leaf: true, State: messages.StateQueued},
		{Type: cold, Leaf: true, State: messages.StateCompleted},
	}
	if got := obs.list(); !slices.Equal(got, want) {
		t.Fatalf("observations\n got %+v\nwant %+v", got, want)
	}
}

// TestObserver_SealedJobCarriesItsDuration: the outcome's observation holds
// the job's time from creation to seal on the engine's clock; the
// admission's holds none.
func TestObserver_SealedJobCarriesItsDuration(t *testing.T) {
	obs := &observations{}
	e, clk := newEngine(t, Options{OnJob: obs.add})
	release := make(chan struct{})
	job := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "a"},
		messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
			<-release
			_ = job.Complete("done", "{}")
		}))
	clk.Advance(90 * time.Second)
	close(release)
	waitTerminal(t, e, job.ID)

	fw := messages.TypeFirmwareUpdate
	want := []messages.JobObservation{
		{Type: fw, Leaf: true, State: messages.StateQueued},
		{Type: fw, Leaf: true, State: messages.StateCompleted, Duration: 90 * time.Second},
	}
	if got := obs.list(); !slices.Equal(got, want) {
		t.Fatalf("observations\n got %+v\nwant %+v", got, want)
	}
}
