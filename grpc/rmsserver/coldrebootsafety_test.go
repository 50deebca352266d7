package rmsserver

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
)

// TestColdRebootNamesAndRestoresTheNodesItLeftOut replays the incident: a
// cold reboot listing compute-01, compute-02, switch-01 and the shelves.
// The reply and result_json name every other registered node, and the
// left-out compute trays that were On are On again afterwards.
func TestColdRebootNamesAndRestoresTheNodesItLeftOut(t *testing.T) {
	s := startSimRack(t)
	compute, switches, shelves := s.ofKind(hw.KindCompute), s.ofKind(hw.KindSwitch), s.ofKind(hw.KindPowerShelf)
	listed := append(append(append([]hw.Node(nil), compute[:2]...), switches[0]), shelves...)
	left := append(append([]hw.Node(nil), compute[2:]...), switches[1:]...)
	resp, err := s.client.ExecuteColdReboot(rpcContext(t), quickColdReboot(nodeSet(listed...)))
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetJobId() == "" {
		t.Fatalf("ExecuteColdReboot = %v", r)
	}
	if !strings.Contains(r.GetMessage(), " Left out: 24 registered node(s) of rack "+listed[0].RackID+" are not in the request") {
		t.Fatalf("reply message %q does not say what was left out", r.GetMessage())
	}
	for _, n := range left {
		if !strings.Contains(r.GetMessage(), n.ID) {
			t.Errorf("reply message does not name %s", n.ID)
		}
	}
	for _, n := range listed {
		if strings.Contains(r.GetMessage(), n.ID+",") || strings.HasSuffix(r.GetMessage(), n.ID+".") {
			t.Errorf("reply message names listed node %s as left out", n.ID)
		}
	}

	if err := s.engine.Wait(waitContext(t), r.GetJobId()); err != nil {
		t.Fatal(err)
	}
	done := s.jobStatus(t, r.GetJobId())
	if done.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED {
		t.Fatalf("coordinator ended %v: %s", done.GetExecutionState(), done.GetErrorMessage())
	}
	var result struct {
		LeftOut []struct {
			NodeID      string `json:"node_id"`
			PowerBefore string `json:"power_before"`
			Action      string `json:"action"`
		} `json:"left_out"`
	}
	if err := json.Unmarshal([]byte(done.GetResultJson()), &result); err != nil || len(result.LeftOut) != len(left) {
		t.Fatalf("result_json left_out = %+v (%v), want %d nodes", result.LeftOut, err, len(left))
	}
	for i, l := range result.LeftOut {
		if l.NodeID != left[i].ID || l.PowerBefore != "On" || !strings.HasPrefix(l.Action, "was On: ") {
			t.Errorf("left_out[%d] = %+v, want %s recorded On", i, l, left[i].ID)
		}
	}
	for _, n := range compute[2:] {
		if got := s.device(t, n.ID).PowerState(); got != "On" {
			t.Errorf("left-out %s is %s after the cold reboot, want On", n.ID, got)
		}
	}
}

// TestColdRebootDrainDuringDischargeRestoresTheShelves: rmsd shuts down
// while the trays discharge and its drain window is shorter than the
// restore step's bound, so the runbook powers the shelves back on at once
// and records it; the drain then ends with nothing interrupted.
func TestColdRebootDrainDuringDischargeRestoresTheShelves(t *testing.T) {
	s := startSimRackDeps(t, sim.Options{TimeScale: 0.001}, func(d *Deps) { d.DrainWindow = 30 * time.Second })
	req := quickColdReboot(nodeSet(s.nodes...))
	req.DischargeFloorSeconds = u32(2400) // the longest accepted: parks in stage 2-3, shelves off
	resp, err := s.client.ExecuteColdReboot(rpcContext(t), req)
	if err != nil || resp.GetResponse().GetJobId() == "" {
		t.Fatalf("ExecuteColdReboot = %v, %v", resp.GetResponse(), err)
	}
	id := resp.GetResponse().GetJobId()
	eventuallyRPC(t, "the discharge wait", func() bool {
		return strings.HasPrefix(s.jobStatus(t, id).GetStateDescription(), "Rack reboot step 2-3")
	})
	if s.fleet.Racks()[0].Fed() {
		t.Fatal("the shelves are on during the discharge wait")
	}
	if _, err := s.engine.BeginShutdown(rpcContext(t)); err != nil {
		t.Fatal(err)
	}
	if err := s.engine.Wait(waitContext(t), id); err != nil {
		t.Fatal(err)
	}
	done := s.jobStatus(t, id)
	want := `interrupted by shutdown of rmsd at stage "verify_discharged": shelves restored`
	if done.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED || done.GetErrorMessage() != want ||
		!strings.Contains(done.GetResultJson(), `"restore":"shelves restored"`) {
		t.Fatalf("job = %v, want failed with %q", done, want)
	}
	if !s.fleet.Racks()[0].Fed() {
		t.Fatal("the shelves are still off after the drain")
	}
	if _, err := s.engine.Drain(waitContext(t)); err != nil {
		t.Fatalf("drain: %v", err)
	}
}
