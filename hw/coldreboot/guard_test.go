package coldreboot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/messages"
)

// startRun runs the runbook on an engine-shaped context (soft carrying
// hard) and returns once it reports a step starting with atStep.
func (r *rack) startRun(t *testing.T, atStep string) (rep *reporter, soft, hard context.CancelCauseFunc, exited chan struct{}) {
	t.Helper()
	hardCtx, hard := context.WithCancelCause(context.Background())
	t.Cleanup(func() { hard(nil) })
	softCtx, soft := context.WithCancelCause(hardCtx)
	rep = newReporter()
	exited = make(chan struct{})
	go func() {
		defer close(exited)
		r.plan.Workflow(r.deps).Run(messages.WorkflowContext(softCtx, hardCtx), rep)
	}()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case step := <-rep.steps:
			if strings.HasPrefix(step, atStep) {
				return rep, soft, hard, exited
			}
		case <-exited:
			t.Fatalf("runbook ended before %q: %+v", atStep, rep.outcome)
		case <-deadline:
			t.Fatalf("runbook never reached %q", atStep)
		}
	}
}

// ended waits for the run to end.
func ended(t *testing.T, exited chan struct{}, rep *reporter) *messages.Outcome {
	t.Helper()
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("runbook did not end within 60s")
	}
	return rep.outcome
}

func TestDrainWindowEndingDuringDischargeRestoresTheShelves(t *testing.T) {
	r := startRack(t)
	timing := fastTiming()
	timing.DischargeFloor = time.Hour // parks in stage 2-3, shelves off
	timing.RestoreTimeout = 20 * time.Second
	r.plan.Timing = timing
	r.deps.DrainWindow = timing.RestoreTimeout + 500*time.Millisecond
	rep, soft, _, exited := r.startRun(t, "Rack reboot step 2-3")
	soft(messages.ErrShuttingDown)
	o := ended(t, exited, rep)
	want := `interrupted by shutdown of rmsd at stage "verify_discharged": shelves restored`
	if o.State != messages.StateFailed || o.Message != want ||
		o.Description != "Rack reboot interrupted at step 2-3 by shutdown of rmsd: shelves restored" {
		t.Fatalf("outcome = %+v", o)
	}
	if doc := decode(t, o.ResultJSON); doc.Status != "interrupted" || doc.Restore != "shelves restored" || doc.CurrentStage != "verify_discharged" {
		t.Fatalf("result = %+v", doc)
	}
	if !r.fleet.Racks()[0].Fed() {
		t.Fatal("the shelves are still off")
	}
}

func TestHardStopPastShelvesOffRestoresTheShelves(t *testing.T) {
	r := startRack(t)
	timing := fastTiming()
	timing.DischargeFloor = time.Hour
	r.plan.Timing = timing
	rep, soft, hard, exited := r.startRun(t, "Rack reboot step 2-3")
	soft(messages.ErrShuttingDown) // no drain window known: the run waits
	hard(messages.ErrInterrupted)  // until the hard stop
	o := ended(t, exited, rep)
	if o.State != messages.StateFailed || o.Message != `interrupted by shutdown of rmsd at stage "verify_discharged": shelves restored` {
		t.Fatalf("outcome = %+v", o)
	}
	if !r.fleet.Racks()[0].Fed() {
		t.Fatal("the shelves are still off")
	}
}

func TestCancelPastShelvesOffSaysWhenAShelfCannotBeRestored(t *testing.T) {
	r := startRack(t)
	timing := fastTiming()
	timing.DischargeFloor = time.Hour
	timing.RestoreTimeout = 20 * time.Second
	r.plan.Timing = timing
	rep, _, hard, exited := r.startRun(t, "Rack reboot step 2-3")
	bad := r.plan.Shelves[1]
	d, _ := r.fleet.Device(bad.ID)
	if err := d.SetUnreachable(true); err != nil {
		t.Fatal(err)
	}
	hard(context.Canceled)
	o := ended(t, exited, rep)
	prefix := `cold reboot cancelled at stage "verify_discharged": could not restore shelves: power shelf on failed on 1 node(s) (` + bad.ID + ")"
	if o.State != messages.StateFailed || !strings.HasPrefix(o.Message, prefix) {
		t.Fatalf("outcome = %+v, want a message starting %q", o, prefix)
	}
	if doc := decode(t, o.ResultJSON); doc.Status != "cancelled" || !strings.HasPrefix(doc.Restore, "could not restore shelves: ") {
		t.Fatalf("result = %+v", doc)
	}
}

func TestDischargeTimeoutRestoresTheShelves(t *testing.T) {
	// The trays ride on their capacitance far longer than the runbook
	// waits: the discharge stage times out with the shelves off.
	r := startRackWith(t, sim.Timing{Discharge: 100 * time.Hour})
	timing := fastTiming()
	timing.DischargePollMax = 200 * time.Millisecond
	r.plan.Timing = timing
	o := r.run(t, context.Background()).outcome
	if o.State != messages.StateFailed || !strings.HasPrefix(o.Message, "cold reboot stage verify_discharged failed: ") ||
		!strings.HasSuffix(o.Message, "; shelves restored") {
		t.Fatalf("outcome = %+v", o)
	}
	if doc := decode(t, o.ResultJSON); doc.Status != "failed" || doc.Restore != "shelves restored" {
		t.Fatalf("result = %+v", doc)
	}
	if !r.fleet.Racks()[0].Fed() {
		t.Fatal("the shelves are still off after the failed discharge")
	}
}
