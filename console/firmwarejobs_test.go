package console_test

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/console"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// finished completes a job at once; failing fails it.
var (
	finished = messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) { _ = job.Complete("done", "") })
	failing  = messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "activation refused"))
	})
)

// runFirmwareJobs starts the follower (subscribed once it returns); it
// is stopped, and waited for, when the test ends.
func runFirmwareJobs(t *testing.T, f *fixture, buffer int, log io.Writer, ended func(hw.Ref)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := console.FirmwareJobs{Jobs: f.engine, Ended: ended, Buffer: buffer, Log: zerolog.New(log)}.Start(ctx)
	t.Cleanup(func() { cancel(); <-done })
}

// jobKinds runs one job of every kind that ends on a node, each on a node
// of its own, and returns the nodes of the firmware ones.
func jobKinds(t *testing.T, ctx context.Context, f *fixture, prefix string) []string {
	t.Helper()
	one := func(typ messages.JobType, node string, wf messages.Workflow) {
		j, err := f.engine.Create(ctx, messages.JobSpec{Type: typ, RackID: "r", NodeID: prefix + node}, wf, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.engine.Wait(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	batch := func(typ messages.JobType, nodes ...string) {
		var targets []messages.BatchTarget
		for i, n := range nodes {
			wf := finished
			if i == 1 {
				wf = failing
			}
			targets = append(targets, messages.BatchTarget{RackID: "r", NodeID: prefix + n, Workflow: wf})
		}
		rep, err := f.engine.CreateBatch(ctx, messages.JobSpec{Type: typ, RackID: "r"}, targets, nil)
		if err != nil || len(rep.Admitted) != len(nodes) {
			t.Fatalf("batch: %v %+v", err, rep)
		}
		if err := f.engine.Wait(ctx, rep.Parent.ID); err != nil {
			t.Fatal(err)
		}
	}
	one(messages.TypeFirmwareUpdate, "update", finished)
	one(messages.TypeFirmwareUpdate, "update-failed", failing)
	batch(messages.TypeFirmwareUpdate, "apply-1", "apply-2")
	batch(messages.TypeSwitchSystemImageUpdate, "image-1", "image-2")
	one(messages.TypeColdRebootSequence, "cold-reboot", finished)
	batch(messages.TypeSwitchCertificate, "cert-1", "cert-2")
	one(messages.TypeSystemValidation, "validation", finished)
	var want []string
	for _, n := range []string{"update", "update-failed", "apply-1", "apply-2", "image-1", "image-2"} {
		want = append(want, prefix+n)
	}
	return want
}

// collect reads named nodes until last is named and, when all is set,
// every node of all too; it returns the nodes named other than the
// "last-" ones, sorted, each once.
func collect(t *testing.T, named <-chan hw.Ref, last string, all []string) []string {
	t.Helper()
	seen := map[string]bool{}
	var got []string
	deadline := time.After(30 * time.Second)
	for {
		missing := slices.ContainsFunc(all, func(n string) bool { return !seen[n] })
		if seen[last] && !missing {
			slices.Sort(got)
			return slices.Compact(got)
		}
		select {
		case ref := <-named:
			if ref.RackID != "r" {
				t.Errorf("named %v, on another rack", ref)
			}
			seen[ref.NodeID] = true
			if !strings.HasPrefix(ref.NodeID, "last-") {
				got = append(got, ref.NodeID)
			}
		case <-deadline:
			t.Fatalf("%s or one of %v never named; named so far %v", last, all, got)
		}
	}
}

// TestFirmwareJobsNamesTheNodesOfEndedFirmwareJobsOnly: UpdateFirmware
// jobs, firmware batch children and switch image children are named when
// they end, failed or not; a cold reboot, a switch certificate batch and
// a validation scan are not.
func TestFirmwareJobsNamesTheNodesOfEndedFirmwareJobsOnly(t *testing.T) {
	f := newFixture(t, nil)
	named := make(chan hw.Ref, 64)
	runFirmwareJobs(t, f, 0, io.Discard, func(ref hw.Ref) { named <- ref })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := jobKinds(t, ctx, f, "")
	// The feed is ordered: once a last firmware job is named, every
	// earlier one has been.
	jobKinds(t, ctx, f, "last-")
	got := collect(t, named, "last-update", nil)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("named %v, want %v", got, want)
	}
}

// TestFirmwareJobsCatchesUpAfterTheFeedDroppedIt: the follower is held
// while the jobs end, so its one-change buffer overflows and the feed
// drops it; released, it lists the jobs and still names every firmware
// job's node.
func TestFirmwareJobsCatchesUpAfterTheFeedDroppedIt(t *testing.T) {
	f := newFixture(t, nil)
	named := make(chan hw.Ref, 256)
	hold := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(hold) }) }
	var log syncBuffer
	runFirmwareJobs(t, f, 1, &log, func(ref hw.Ref) {
		<-hold
		named <- ref
	})
	t.Cleanup(release) // before the follower is stopped, should the test fail early
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := jobKinds(t, ctx, f, "")
	release()
	jobKinds(t, ctx, f, "last-")
	// A catch-up names the nodes newest first: wait for all of them (one
	// wrongly named, being newer than the image children, comes first).
	got := collect(t, named, "last-update", want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("named %v, want %v", got, want)
	}
	if !strings.Contains(log.String(), "fell behind") {
		t.Fatalf("the follower was never dropped, the test proves nothing: %s", log.String())
	}
}

// syncBuffer is a log sink safe across goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
