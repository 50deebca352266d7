package coldreboot

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/messages"
)

// partial narrows the rack's plan to compute-01, compute-02, the first
// switch and every shelf, as in the incident, and leaves the rest out.
func (r *rack) partial(t *testing.T) (all []hw.Node) {
	t.Helper()
	all = append(append(append(all, r.plan.Compute...), r.plan.Switches...), r.plan.Shelves...)
	listed := append(append(append([]hw.Node(nil), r.plan.Compute[:2]...), r.plan.Switches[0]), r.plan.Shelves...)
	plan, _, err := Check(listed, r.plan.Timing)
	if err != nil {
		t.Fatal(err)
	}
	plan.LeaveOut(all)
	r.plan = plan
	return all
}

func leftOutOf(t *testing.T, resultJSON string) map[string]LeftOut {
	t.Helper()
	var doc struct {
		LeftOut []LeftOut `json:"left_out"`
	}
	if err := json.Unmarshal([]byte(resultJSON), &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]LeftOut{}
	for _, l := range doc.LeftOut {
		out[l.NodeID] = l
	}
	return out
}

func TestLeftOutTraysThatWereOnAreOnAfterTheColdReboot(t *testing.T) {
	r := startRack(t)
	r.partial(t)
	if len(r.plan.LeftOut) != len(r.fleet.Nodes())-2-1-len(r.plan.Shelves) {
		t.Fatalf("%d nodes left out", len(r.plan.LeftOut))
	}
	// One left-out compute tray is Off before the run: it stays Off.
	off := r.plan.LeftOut[0]
	if off.Type.Kind() != hw.KindCompute {
		t.Fatalf("first left-out node %s is not a compute tray", off.ID)
	}
	if err := r.deps.Nodes.One(context.Background(), off, setPower(platform.PowerForceOff)); err != nil {
		t.Fatal(err)
	}
	if offDev, _ := r.fleet.Device(off.ID); offDev.PowerState() != "Off" {
		t.Fatalf("%s is %s after ForceOff", off.ID, offDev.PowerState())
	}

	rep := r.run(t, context.Background())
	if rep.outcome.State != messages.StateCompleted {
		t.Fatalf("outcome = %+v", rep.outcome)
	}
	got := leftOutOf(t, rep.outcome.ResultJSON)
	if len(got) != len(r.plan.LeftOut) {
		t.Fatalf("result_json names %d left-out nodes, want %d", len(got), len(r.plan.LeftOut))
	}
	for _, n := range r.plan.LeftOut {
		d, _ := r.fleet.Device(n.ID)
		l := got[n.ID]
		if n.ID == off.ID {
			if d.PowerState() != "Off" || l.PowerBefore != "Off" || l.Action != "was Off: left off" {
				t.Errorf("%s: power %s, record %+v; want it left Off", n.ID, d.PowerState(), l)
			}
			continue
		}
		if d.PowerState() != "On" || l.PowerBefore != "On" || l.Action == "" {
			t.Errorf("%s (%s): power %s after the run, record %+v; want it On again", n.ID, n.Type, d.PowerState(), l)
		}
		if n.Type.Kind() == hw.KindCompute && l.Action != "was On: powered on again after the shelves came back" {
			t.Errorf("%s: action %q", n.ID, l.Action)
		}
	}
}

func TestLeftOutTraysAreNamedWhenTheRunStopsBeforeTheyComeBack(t *testing.T) {
	r := startRack(t)
	r.partial(t)
	timing := fastTiming()
	timing.DischargeFloor = time.Hour // parks in stage 2-3
	r.plan.Timing = timing
	rep, _, hard, exited := r.startRun(t, "Rack reboot step 2-3")
	hard(context.Canceled)
	o := ended(t, exited, rep)
	got := leftOutOf(t, o.ResultJSON)
	for _, n := range r.plan.LeftOut {
		l := got[n.ID]
		if l.PowerBefore != "On" || l.Action != "was On: not powered on, the run ended before its power-on stage; power it on once its BMC answers" {
			t.Errorf("%s: record %+v", n.ID, l)
		}
	}
}
