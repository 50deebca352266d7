package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/test/clustersite"
)

// TestClusterDrainHandsIdleRacksOverAtOnce: three members serve a six-rack
// site; a cold reboot runs on one rack of member X, which is then stopped
// with SIGTERM. While that job still runs on X, X's other racks are owned
// and served by the other members under higher epochs, and they admit new
// jobs; the busy rack's job answers through every member all along, and
// completes on X; X then hands that rack over and exits 0. No device was
// acted on by two workflows at once.
func TestClusterDrainHandsIdleRacksOverAtOnce(t *testing.T) {
	s := startClusterSite(t, 6, 3, "")
	before := untilSettled(t, s, s.RackIDs(), s.Members...)
	count := map[string]int{}
	for _, l := range before {
		count[l.Member]++
	}
	xi := 0
	for i, m := range s.Members {
		if count[m.ID] > count[s.Members[xi].ID] {
			xi = i
		}
	}
	x := s.Members[xi]
	var busy string
	var idle []string
	for _, rack := range s.RackIDs() {
		switch {
		case before[rack].Member != x.ID:
		case busy == "":
			busy = rack
		default:
			idle = append(idle, rack)
		}
	}
	slices.Sort(idle)
	entry := s.Members[(xi+1)%len(s.Members)]

	ctx, cancel := context.WithTimeout(t.Context(), 3*clusterWait)
	defer cancel()
	job, err := coldReboot(ctx, s, entry.RMS(), busy)
	if err != nil {
		t.Fatal(err)
	}
	if js, err := untilAnswered(ctx, entry.RMS(), job); err != nil || terminalState(js.GetExecutionState()) {
		t.Fatalf("the cold reboot of %s through %s: %v, %v; the test needs it running", busy, entry.ID, js, err)
	}

	// Every member polls the busy rack's job from before the SIGTERM until
	// it reads terminal (or, for X, until X has exited).
	stopped := make(chan error, 1)
	exited := make(chan struct{})
	polls := make([]*jobPoll, len(s.Members))
	var wg sync.WaitGroup
	for i, m := range s.Members {
		polls[i] = &jobPoll{member: m.ID}
		var until <-chan struct{}
		if i == xi {
			until = exited
		}
		c := m.RMS()
		wg.Go(func() { polls[i].run(ctx, c, job, until) })
	}
	sigterm := time.Now()
	go func() {
		stopped <- s.Stop(xi)
		close(exited)
	}()

	// X's idle racks are owned and served elsewhere while X drains.
	moved, err := untilMoved(ctx, s, idle, before, x, exited)
	if err != nil {
		t.Fatal(err)
	}
	handedOver := time.Since(sigterm)
	// A new job for each of them is admitted by its new owner meanwhile.
	var newJobs []string
	for _, rack := range idle {
		id, err := coldReboot(ctx, s, entry.RMS(), rack)
		if err != nil {
			t.Fatalf("rack %s after the hand-over: %v", rack, err)
		}
		newJobs = append(newJobs, id)
	}
	select {
	case <-exited:
		t.Errorf("%s exited before its idle racks' new jobs were admitted; the drain did not hand them over while it ran", x.ID)
	default:
	}

	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	stoppedIn := time.Since(sigterm)
	wg.Wait()
	var survivors []*clustersite.Member
	for _, m := range s.Members {
		if m != x {
			survivors = append(survivors, m)
		}
	}
	after := untilSettled(t, s, s.RackIDs(), survivors...)

	// The busy rack's job completed, on X, after the idle racks had moved;
	// every poll of it was answered until it had ended.
	final := untilEnded(ctx, t, survivors[0], busy, job)
	if final.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED {
		t.Errorf("job %s of the busy rack %s = %v %q, want COMPLETED", job, busy, final.GetExecutionState(), final.GetErrorMessage())
	}
	ended := final.GetUpdatedAt().AsTime()
	if !moved.Before(ended) {
		t.Errorf("the idle racks were served elsewhere at %s, after the busy rack's job ended at %s: they waited for it", moved, ended)
	}
	for i, p := range polls {
		if i != xi && !p.sawEnd {
			t.Errorf("polls through %s never read job %s ended", p.member, job)
		}
		for _, f := range p.failures {
			if f.at.Before(ended) {
				t.Errorf("a poll of job %s through %s failed at %s, before the job ended (%s): %v", job, p.member, f.at, ended, f.err)
			}
		}
	}
	if after[busy].Member == x.ID || after[busy].Epoch <= before[busy].Epoch {
		t.Errorf("busy rack %s after the drain: %+v (before: %+v)", busy, after[busy], before[busy])
	}
	for i, rack := range idle {
		js := untilEnded(ctx, t, survivors[0], rack, newJobs[i])
		if js.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_COMPLETED {
			t.Errorf("new job %s of rack %s = %v %q, want COMPLETED", newJobs[i], rack, js.GetExecutionState(), js.GetErrorMessage())
		}
	}
	for _, m := range survivors[1:] {
		if js := untilEnded(ctx, t, m, busy, job); js.GetExecutionState() != final.GetExecutionState() {
			t.Errorf("job %s through %s = %v, through %s %v", job, m.ID, js.GetExecutionState(), survivors[0].ID, final.GetExecutionState())
		}
	}
	if n := s.Fleet.Overlaps(); n != 0 {
		t.Errorf("%d overlapping workflows on one device, want 0", n)
	}
	t.Logf("%s (%d racks, one busy) got SIGTERM; its %d idle racks were served by other members %s later, the busy rack's job ended %s after the SIGTERM, %s exited %s after it (membership timeout %d s)",
		x.ID, count[x.ID], len(idle), handedOver.Round(10*time.Millisecond), ended.Sub(sigterm).Round(10*time.Millisecond),
		x.ID, stoppedIn.Round(10*time.Millisecond), siteMembershipTimeout)
}

// jobPoll reads one job through one member every quarter second, and
// records the failed reads and whether it read the job ended.
type jobPoll struct {
	member   string
	sawEnd   bool
	failures []pollFailure
}

type pollFailure struct {
	at  time.Time
	err error
}

// run polls job through c until it reads it ended, until ends, or ctx
// ends.
func (p *jobPoll) run(ctx context.Context, c rmspb.RackManagerClient, job string, until <-chan struct{}) {
	for {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		js, err := jobState(cctx, c, job)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			p.failures = append(p.failures, pollFailure{at: time.Now(), err: err})
		case err == nil && terminalState(js.GetExecutionState()):
			p.sawEnd = true
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-until:
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// untilMoved waits until every rack of racks is owned, under a higher
// epoch than before, by a member other than from that logs it serves the
// rack, and returns when it saw that; it fails if from exits first.
func untilMoved(ctx context.Context, s *clustersite.Site, racks []string, before map[string]store.RackLease, from *clustersite.Member, exited <-chan struct{}) (time.Time, error) {
	poll := time.NewTicker(100 * time.Millisecond) // reads the store and the logs again; a bounded poll
	defer poll.Stop()
	for {
		moved := 0
		for _, rack := range racks {
			l, err := s.Store.RackOwner(ctx, rack)
			if err != nil || l.Member == from.ID || l.Epoch <= before[rack].Epoch || !l.Expires.After(time.Now()) {
				continue
			}
			for _, m := range s.Members {
				if m.ID == l.Member && slices.Contains(m.Serving(), rack) {
					moved++
				}
			}
		}
		if moved == len(racks) {
			return time.Now(), nil
		}
		select {
		case <-exited:
			return time.Time{}, fmt.Errorf("%s exited before its idle racks %v were served elsewhere: they waited for its busy rack", from.ID, racks)
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("racks %v not served by another member than %s: %v", racks, from.ID, ctx.Err())
		case <-poll.C:
		}
	}
}
