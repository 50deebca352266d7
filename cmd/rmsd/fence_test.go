package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/test/clustersite"
)

// TestClusterBlockedMemberFencesItselfAndRestarts: three members serve a
// six-rack site with a cold reboot of every rack running; the member
// owning the most racks is stopped (SIGSTOP) until both others have
// dropped it from their membership (protoactor then blocks it for good),
// and continued (SIGCONT). It finds itself blocked, releases its racks and
// exits non-zero with "member blocked by the cluster"; the survivors own
// its racks under higher epochs; every job id answers and ends; no device
// was acted on by two workflows at once; started again, the member joins
// the cluster and serves calls.
func TestClusterBlockedMemberFencesItselfAndRestarts(t *testing.T) {
	s := startClusterSite(t, 6, 3, "")
	untilSettled(t, s, s.RackIDs(), s.Members...)
	before, vi, count, survivors := busiest(t, s)
	victim := s.Members[vi]
	entry := survivors[0].RMS()

	ctx, cancel := context.WithTimeout(t.Context(), 3*clusterWait)
	defer cancel()
	jobs := map[string]string{} // rack -> job id
	for rack := range s.Racks {
		id, err := coldReboot(ctx, s, entry, rack)
		if err != nil {
			t.Fatal(err)
		}
		jobs[rack] = id
	}

	// Stopped until both survivors have dropped it: they block it then.
	logged := map[string]int{}
	for _, m := range survivors {
		logged[m.ID] = len(m.Log())
	}
	frozen := time.Now()
	if err := s.Freeze(vi); err != nil {
		t.Fatal(err)
	}
	thawed := false
	defer func() {
		if !thawed {
			_ = s.Thaw(vi)
		}
	}()
	for _, m := range survivors {
		for !droppedAMember(m.Log()[logged[m.ID]:]) {
			if ctx.Err() != nil {
				t.Fatalf("%s did not drop the stopped %s; its log: %s", m.ID, victim.ID, m.LogPath())
			}
			clustersite.Pause(ctx, 100*time.Millisecond)
		}
	}
	dropped := time.Now()
	if err := s.Thaw(vi); err != nil {
		t.Fatal(err)
	}
	thawed = true
	t.Logf("%s (%d racks) stopped; dropped by both others %s later; continued",
		victim.ID, count[victim.ID], dropped.Sub(frozen).Round(10*time.Millisecond))

	// It fences itself (its racks released) and exits non-zero.
	for !strings.Contains(victim.Log(), `"message":"member fenced: it acts on no rack"`) {
		select {
		case <-victim.Exited():
			t.Fatalf("%s exited without fencing itself; its log: %s", victim.ID, victim.LogPath())
		case <-ctx.Done():
			t.Fatalf("%s did not fence itself; its log: %s", victim.ID, victim.LogPath())
		default:
		}
		clustersite.Pause(ctx, 50*time.Millisecond)
	}
	fenced := time.Now()
	err := victim.WaitExit(ctx)
	exited := time.Now()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("%s after being blocked: %v, want a non-zero exit; its log: %s", victim.ID, err, victim.LogPath())
	}
	log := victim.Log()
	if !strings.Contains(log, `"message":"member blocked by the cluster: `) {
		t.Fatalf("%s exited (%v) without logging that the cluster blocked it; its log: %s", victim.ID, err, victim.LogPath())
	}
	// Whatever it still owned, it released: no lease of its is left running.
	for rack := range s.Racks {
		l, err := s.Store.RackOwner(ctx, rack)
		if err != nil {
			t.Fatal(err)
		}
		if l.Member == victim.ID && l.Expires.After(time.Now()) {
			t.Errorf("rack %s still leased by the fenced %s after it exited: %+v", rack, victim.ID, l)
		}
	}
	after := untilSettled(t, s, s.RackIDs(), survivors...)
	served := time.Now()
	t.Logf("%s fenced itself %s after it was continued and exited (%v) %s after that; the survivors owned its racks %s after the fence (membership timeout %d s)",
		victim.ID, fenced.Sub(dropped).Round(10*time.Millisecond), err, exited.Sub(fenced).Round(10*time.Millisecond),
		served.Sub(fenced).Round(10*time.Millisecond), siteMembershipTimeout)
	for rack, l := range before {
		if l.Member == victim.ID && (after[rack].Member == victim.ID || after[rack].Epoch <= l.Epoch) {
			t.Errorf("rack %s: before %+v, after %+v; want a survivor under a higher epoch", rack, l, after[rack])
		}
	}

	// Every job answers and ends through every survivor; the survivors'
	// own racks' jobs complete.
	for rack, id := range jobs {
		for _, p := range survivors {
			js := untilEnded(ctx, t, p, rack, id)
			if before[rack].Member != victim.ID && js.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED {
				t.Errorf("job %s of rack %s (a survivor's) through %s = %v %q, want COMPLETED", id, rack, p.ID, js.GetExecutionState(), js.GetErrorMessage())
			}
		}
	}
	if n := s.Fleet.Overlaps(); n != 0 {
		t.Errorf("%d overlapping workflows on one device, want 0", n)
	}

	// Started again, it joins: ownership settles over all three and it
	// answers every job and admits a cold reboot of every rack.
	restartServes(ctx, t, s, vi, jobs)
	if n := s.Fleet.Overlaps(); n != 0 {
		t.Errorf("%d overlapping workflows on one device, want 0", n)
	}
}

// droppedAMember reports whether log (a member's JSON lines) shows
// protoactor's membership losing a member.
func droppedAMember(log string) bool {
	for _, line := range strings.Split(log, "\n") {
		var l struct {
			Message string `json:"message"`
			Left    int    `json:"left"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Message == "Updated ClusterTopology" && l.Left > 0 {
			return true
		}
	}
	return false
}
