package main

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/test/clustersite"
)

// TestClusterHealedPartitionFencesTheSmallerSide: three members serve a
// six-rack site with every member's traffic to the others through
// proxies; the member owning the most racks is cut off from the other two
// (the store stays reachable to all) until each side has dropped the
// other from its view (protoactor blocks them for good), and the
// partition heals. The lone member finds that a member it blocked has
// blocked it too, yields as the smaller side and exits non-zero with
// "member blocked by the cluster"; the other two never fence and own
// every rack under higher epochs; every job id answers; started again,
// the member joins and serves.
func TestClusterHealedPartitionFencesTheSmallerSide(t *testing.T) {
	s := startSite(t, clustersite.Options{Racks: 6, Members: 3, Binary: siteBinary(t), Partitionable: true,
		MembershipTimeout: siteMembershipTimeout, DrainTimeout: siteDrainTimeout})
	untilSettled(t, s, s.RackIDs(), s.Members...)
	before, vi, count, larger := busiest(t, s)
	lone := s.Members[vi]
	ctx, cancel := context.WithTimeout(t.Context(), 3*clusterWait)
	defer cancel()
	jobs := map[string]string{} // rack -> job id, admitted before the partition
	for rack := range s.Racks {
		id, err := coldReboot(ctx, s, larger[0].RMS(), rack)
		if err != nil {
			t.Fatal(err)
		}
		jobs[rack] = id
	}

	logged := map[string]int{}
	for _, m := range s.Members {
		logged[m.ID] = len(m.Log())
	}
	cut := time.Now()
	if err := s.Partition(vi); err != nil {
		t.Fatal(err)
	}
	// Each side drops the other: the lone member sees only itself, the
	// others see each other.
	for _, m := range s.Members {
		want := 2
		if m == lone {
			want = 1
		}
		for viewSize(m.Log()[logged[m.ID]:]) != want {
			if ctx.Err() != nil {
				t.Fatalf("%s's view did not shrink to %d members; its log: %s", m.ID, want, m.LogPath())
			}
			clustersite.Pause(ctx, 100*time.Millisecond)
		}
	}
	split := time.Now()
	// While cut off, the lone member's questions to the members it
	// blocked get no answer (the proxies refuse its remote connections
	// to the others, twice at least), and nobody fences: no answer says
	// nothing.
	for _, m := range larger {
		mi := slices.Index(s.Members, m)
		for s.Refused(vi, mi) < 2 || s.Refused(mi, vi) < 1 {
			if ctx.Err() != nil {
				t.Fatalf("connections between %s and %s's remotes were not refused during the partition (%d, %d)",
					lone.ID, m.ID, s.Refused(vi, mi), s.Refused(mi, vi))
			}
			clustersite.Pause(ctx, 100*time.Millisecond)
		}
	}
	for _, m := range s.Members {
		if strings.Contains(m.Log()[logged[m.ID]:], `"message":"member fencing itself`) {
			t.Fatalf("%s fenced itself during the partition; its log: %s", m.ID, m.LogPath())
		}
	}
	s.Heal()
	healed := time.Now()
	t.Logf("%s (%d racks) cut off; both sides had dropped each other %s later; healed",
		lone.ID, count[lone.ID], split.Sub(cut).Round(10*time.Millisecond))

	err := lone.WaitExit(ctx)
	exited := time.Now()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 {
		t.Fatalf("%s after the healed partition: %v, want a non-zero exit; its log: %s", lone.ID, err, lone.LogPath())
	}
	if log := lone.Log(); !strings.Contains(log, `"message":"member blocked by the cluster: `) || !strings.Contains(log, "has healed") {
		t.Fatalf("%s exited (%v) without logging that it yields after the healed partition; its log: %s", lone.ID, err, lone.LogPath())
	}
	after := untilSettled(t, s, s.RackIDs(), larger...)
	served := time.Now()
	t.Logf("%s fenced and exited (%v) %s after the heal; the other side owned its racks %s after the heal (membership timeout %d s)",
		lone.ID, err, exited.Sub(healed).Round(10*time.Millisecond), served.Sub(healed).Round(10*time.Millisecond), siteMembershipTimeout)
	for _, m := range larger {
		if !m.Up() || strings.Contains(m.Log(), `"message":"member fencing itself`) {
			t.Fatalf("%s of the larger side fenced itself or is down; its log: %s", m.ID, m.LogPath())
		}
	}
	for rack, l := range before {
		if l.Member == lone.ID && (after[rack].Member == lone.ID || after[rack].Epoch <= l.Epoch) {
			t.Errorf("rack %s: before %+v, after %+v; want the larger side under a higher epoch", rack, l, after[rack])
		}
	}
	for rack, id := range jobs {
		for _, m := range larger {
			untilEnded(ctx, t, m, rack, id)
		}
	}
	if n := s.Fleet.Overlaps(); n != 0 {
		t.Errorf("%d overlapping workflows on one device, want 0", n)
	}

	// Started again, it joins the larger side and serves.
	restartServes(ctx, t, s, vi, jobs)
}

// viewSize returns the member count of the last topology change in log
// (a member's JSON lines), or 0 if there is none.
func viewSize(log string) int {
	n := 0
	for _, line := range strings.Split(log, "\n") {
		var l struct {
			Message string `json:"message"`
			Members int    `json:"members"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Message == "Updated ClusterTopology" {
			n = l.Members
		}
	}
	return n
}
