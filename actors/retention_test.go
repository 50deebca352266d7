package actors

import (
	"errors"
	"testing"
	"time"

	"github.com/rmsd/rmsd/messages"
)

func gone(t *testing.T, e *Engine, id string) bool {
	t.Helper()
	_, err := e.Get(testCtx(t), id, false)
	if err != nil && !errors.Is(err, messages.ErrJobNotFound) {
		t.Fatal(err)
	}
	return err != nil
}

func TestExplicitTTLCleanupRemovesExpiredJobs(t *testing.T) {
	e, clk := newEngine(t, Options{})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	waitTerminal(t, e, s.ID)
	clk.Advance(24 * time.Hour)
	clk.Advance(-time.Second)
	if n, _ := e.Reap(testCtx(t)); n != 0 || gone(t, e, s.ID) {
		t.Fatal("evicted before the TTL")
	}
	clk.Advance(2 * time.Second)
	if n, _ := e.Reap(testCtx(t)); n != 1 || !gone(t, e, s.ID) {
		t.Fatal("not evicted after the TTL")
	}
}

func TestConfiguredTTLControlsTerminalJobEviction(t *testing.T) {
	e, clk := newEngine(t, Options{TerminalJobTTL: 10 * time.Millisecond})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	waitTerminal(t, e, s.ID)
	clk.Advance(50 * time.Millisecond)
	if _, err := e.Reap(testCtx(t)); err != nil || !gone(t, e, s.ID) {
		t.Fatalf("not evicted: %v", err)
	}
}

func TestClockMovingBackwardsExpiresNothing(t *testing.T) {
	e, clk := newEngine(t, Options{TerminalJobTTL: time.Minute})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	waitTerminal(t, e, s.ID)
	clk.Advance(-time.Hour)
	if n, _ := e.Reap(testCtx(t)); n != 0 {
		t.Fatal("evicted with a negative age")
	}
}

func TestReaperEvictsExpiredTerminalJobsWithoutCreate(t *testing.T) {
	ticks := make(chan time.Time)
	e, clk := newEngine(t, Options{TerminalJobTTL: time.Minute, ReaperTicks: ticks})
	s := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n"}, completes("Completed", ""))
	waitTerminal(t, e, s.ID)
	clk.Advance(time.Minute)
	// The reaper handles ticks one at a time: once the second tick is taken,
	// the first one's pass is queued in the registry ahead of our read.
	ticks <- time.Time{}
	ticks <- time.Time{}
	if !gone(t, e, s.ID) {
		t.Fatal("reaper tick did not evict the expired job")
	}
}

func TestReaperEvictsUnpolledParentInTwoPasses(t *testing.T) {
	e, clk := newEngine(t, Options{TerminalJobTTL: time.Minute})
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(completes("Completed", ""), "r", "a"))
	waitTerminal(t, e, rep.Parent.ID)
	clk.Advance(time.Minute)
	if n, _ := e.Reap(testCtx(t)); n != 1 || !gone(t, e, rep.Admitted[0].ID) || gone(t, e, rep.Parent.ID) {
		t.Fatalf("pass 1 evicted %d", n)
	}
	if p := mustGet(t, e, rep.Parent.ID); p.State != messages.StateCompleted {
		t.Fatalf("parent %+v", p)
	}
	if n, _ := e.Reap(testCtx(t)); n != 1 || !gone(t, e, rep.Parent.ID) {
		t.Fatalf("pass 2 evicted %d", n)
	}
}

func TestTTLCleanupProtectsChildrenOfLiveParent(t *testing.T) {
	e, clk := newEngine(t, Options{TerminalJobTTL: time.Minute})
	g := newGate()
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, []messages.BatchTarget{
		{RackID: "r", NodeID: "a", Workflow: completes("Completed", "")},
		{RackID: "r", NodeID: "b", Workflow: g},
	})
	waitTerminal(t, e, rep.Admitted[0].ID)
	clk.Advance(time.Hour)
	if n, _ := e.Reap(testCtx(t)); n != 0 || gone(t, e, rep.Admitted[0].ID) {
		t.Fatal("child of a live parent was evicted")
	}
	close(g.release)
	waitTerminal(t, e, rep.Parent.ID)
}

func TestAgedTerminalChildDoesNotFailUnreadParentBatch(t *testing.T) {
	// The reaper refreshes parents before it evicts, so a child that aged
	// past the TTL is counted as completed, never as missing.
	e, clk := newEngine(t, Options{TerminalJobTTL: time.Minute})
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, nil)
	child := mustCreate(t, e, messages.JobSpec{ParentID: rep.Parent.ID, RackID: "r", NodeID: "a"}, completes("Completed", ""))
	waitTerminal(t, e, rep.Parent.ID, child.ID)
	clk.Advance(time.Minute)
	if _, err := e.Reap(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if p := mustGet(t, e, rep.Parent.ID); p.State != messages.StateCompleted {
		t.Fatalf("parent %+v", p)
	}
}

func TestReaperIntervalClampsTTL(t *testing.T) {
	for ttl, want := range map[time.Duration]time.Duration{
		24 * time.Hour:          300 * time.Second,
		301 * time.Second:       300 * time.Second,
		60 * time.Second:        60 * time.Second,
		time.Millisecond:        time.Second,
		1500 * time.Millisecond: 1500 * time.Millisecond,
	} {
		if got := reaperInterval(ttl); got != want {
			t.Errorf("reaperInterval(%v) = %v, want %v", ttl, got, want)
		}
	}
}
