package actors

import (
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

// nextChange reads one change or fails after a generous deadline.
func nextChange(t *testing.T, s *Subscription) messages.JobChange {
	t.Helper()
	select {
	case c, ok := <-s.C():
		if !ok {
			t.Fatalf("feed closed (dropped %v)", s.Dropped())
		}
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("no change within 10s")
	}
	return messages.JobChange{}
}

// until reads changes until match accepts one.
func until(t *testing.T, s *Subscription, what string, match func(messages.JobChange) bool) messages.JobChange {
	t.Helper()
	for {
		c := nextChange(t, s)
		if match(c) {
			return c
		}
	}
}

func TestFeed_ReportsAJobsLifeAndItsHolds(t *testing.T) {
	e, _ := newEngine(t, Options{})
	sub := e.Subscribe(0)
	defer sub.Close()
	g := newGate()
	job := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "n1"}, g)

	until(t, sub, "the hold", func(c messages.JobChange) bool {
		return c.Hold != nil && c.Hold.Held && c.Hold.NodeID == "n1" && c.Hold.Job == job.ID
	})
	until(t, sub, "running at the gate", func(c messages.JobChange) bool {
		return c.Job != nil && c.Job.ID == job.ID && c.Job.State == messages.StateRunning && c.Job.Description == "waiting at gate"
	})
	holds, err := e.Holds(testCtx(t))
	if err != nil || len(holds) != 1 || holds[0].Job != job.ID || holds[0].NodeID != "n1" {
		t.Fatalf("holds %+v, %v", holds, err)
	}
	close(g.release)
	until(t, sub, "completed", func(c messages.JobChange) bool {
		return c.Job != nil && c.Job.ID == job.ID && c.Job.State == messages.StateCompleted && c.Job.ResultJSON != ""
	})
	until(t, sub, "the release", func(c messages.JobChange) bool {
		return c.Hold != nil && !c.Hold.Held && c.Hold.NodeID == "n1" && c.Hold.Job == job.ID
	})
	if holds, err := e.Holds(testCtx(t)); err != nil || len(holds) != 0 {
		t.Fatalf("holds after the seal %+v, %v", holds, err)
	}
}

func TestFeed_ReservationHoldsNameTheirCoordinator(t *testing.T) {
	e, _ := newEngine(t, Options{})
	sub := e.Subscribe(0)
	defer sub.Close()
	g := newGate()
	rep, err := e.CreateReserved(testCtx(t), messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: "r", NodeID: "r:cold-reboot"}, g,
		&messages.Reservation{HoldRack: true, Nodes: []messages.NodeRef{{RackID: "r", NodeID: "shelf-1"}}, Description: "Reserved"})
	if err != nil {
		t.Fatalf("create reserved: %v", err)
	}
	id := rep.Job.ID
	until(t, sub, "the shelf held for the coordinator", func(c messages.JobChange) bool {
		return c.Hold != nil && c.Hold.Held && c.Hold.NodeID == "shelf-1" && c.Hold.Job == id && c.Hold.Holder != id
	})
	close(g.release)
	until(t, sub, "the shelf released", func(c messages.JobChange) bool {
		return c.Hold != nil && !c.Hold.Held && c.Hold.NodeID == "shelf-1" && c.Hold.Job == id
	})
}

func TestFeed_ASlowSubscriberIsDroppedAndNeverBlocksTheEngine(t *testing.T) {
	e, _ := newEngine(t, Options{})
	slow := e.Subscribe(2) // never read until the end
	fast := e.Subscribe(4096)
	defer fast.Close()
	var ids []string
	for i := range 20 {
		j := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: string(rune('a' + i))}, completes("done", "{}"))
		ids = append(ids, j.ID)
	}
	waitTerminal(t, e, ids...) // the engine went on regardless of the slow reader
	n := 0
	for range slow.C() {
		n++
	}
	if !slow.Dropped() || n != 2 {
		t.Fatalf("slow subscriber: dropped %v after %d changes, want dropped after 2", slow.Dropped(), n)
	}
	slow.Close() // harmless after the drop
	completed := map[string]bool{}
	for len(completed) < len(ids) {
		c := nextChange(t, fast)
		if c.Job != nil && c.Job.State == messages.StateCompleted {
			completed[c.Job.ID] = true
		}
	}
	if fast.Dropped() {
		t.Fatal("the fast subscriber was dropped")
	}
}

func TestFeed_CloseEndsTheSubscription(t *testing.T) {
	e, _ := newEngine(t, Options{})
	sub := e.Subscribe(1)
	sub.Close()
	sub.Close()
	if _, ok := <-sub.C(); ok || sub.Dropped() {
		t.Fatalf("closed subscription still delivers (dropped %v)", sub.Dropped())
	}
	// Nothing is sent to a closed subscription: a job runs through.
	j := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "n"}, completes("done", "{}"))
	waitTerminal(t, e, j.ID)
}

func TestList_NewestFirstWithOrWithoutChildren(t *testing.T) {
	e, clk := newEngine(t, Options{})
	a := mustCreate(t, e, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "r", NodeID: "a"}, completes("done", "{}"))
	clk.Advance(time.Second)
	rep, err := e.CreateBatch(testCtx(t), messages.JobSpec{Type: messages.TypeFirmwareUpdate}, []messages.BatchTarget{
		{RackID: "r", NodeID: "b", Workflow: completes("done", "{}")},
	}, nil)
	if err != nil || rep.Err != nil {
		t.Fatalf("create batch: %v %v", err, rep.Err)
	}
	waitTerminal(t, e, a.ID, rep.Parent.ID)
	top, err := e.List(testCtx(t), messages.ListJobs{TopLevel: true})
	if err != nil || len(top.Jobs) != 2 || top.Jobs[0].ID != rep.Parent.ID || top.Jobs[1].ID != a.ID {
		t.Fatalf("top-level list %+v, %v", top, err)
	}
	all, err := e.List(testCtx(t), messages.ListJobs{})
	if err != nil || len(all.Jobs) != 3 {
		t.Fatalf("list with children %+v, %v", all, err)
	}
	one, err := e.List(testCtx(t), messages.ListJobs{TopLevel: true, Limit: 1})
	if err != nil || len(one.Jobs) != 1 || one.Jobs[0].ID != rep.Parent.ID {
		t.Fatalf("limited list %+v, %v", one, err)
	}
}
