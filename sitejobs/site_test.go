package sitejobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
)

// The tests run real job engines, one per rack, each answered by a Rack;
// below Site, the cluster delivers a read to the rack's Rack in process
// (or fails, for a rack whose owner is "down"), and the store is a map.

// gate is a workflow that runs until released, then completes.
type gate struct{ release chan struct{} }

func (g gate) Run(ctx context.Context, job messages.Reporter) {
	job.Progress("waiting at the gate")
	select {
	case <-g.release:
		_ = job.Complete("done", `{"ok":true}`)
	case <-ctx.Done():
		_ = job.Fail(messages.NewFailure(messages.ErrorOther, "cancelled"))
	}
}

// site is a Site over racks of real engines.
type site struct {
	t     *testing.T
	sys   *actor.ActorSystem
	site  *Site
	mu    sync.Mutex
	racks map[string]*Rack
	eng   map[string]*actors.Engine
	down  map[string]bool
	// jobRack and parents are the store's job_rack and cluster parents.
	jobRack map[string]string
	parents map[string]store.ClusterParent
	// followed names each rack whose change log Site's poller reached.
	followed chan string
}

func newSite(t *testing.T, racks ...string) *site {
	t.Helper()
	s := &site{t: t, racks: map[string]*Rack{}, eng: map[string]*actors.Engine{}, down: map[string]bool{},
		jobRack: map[string]string{}, parents: map[string]store.ClusterParent{}}
	s.sys = actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
	for _, r := range racks {
		s.open(r)
	}
	s.site = New(Config{Store: s, Wait: 2 * time.Second, Retry: 20 * time.Millisecond, RackRefresh: time.Second})
	s.followed = make(chan string, 16)
	s.site.followed = func(rack string) { s.followed <- rack }
	s.site.Start(s)
	t.Cleanup(func() {
		s.site.Close()
		s.mu.Lock()
		engines := s.eng
		s.mu.Unlock()
		for _, e := range engines {
			e.Close()
		}
		s.sys.Shutdown()
	})
	return s
}

// open starts rack's engine (a new owner, replacing the old one, which
// closes).
func (s *site) open(rack string) *actors.Engine {
	s.t.Helper()
	e, err := actors.New(s.sys, actors.Options{})
	if err != nil {
		s.t.Fatal(err)
	}
	r := OpenRack(e)
	s.mu.Lock()
	old := s.eng[rack]
	s.racks[rack], s.eng[rack] = r, e
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return e
}

func (s *site) setDown(rack string, down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down[rack] = down
}

// ReadJobs implements Cluster.
func (s *site) ReadJobs(ctx context.Context, read *rackpb.JobsRead) (*rackpb.JobsReadReply, error) {
	s.mu.Lock()
	r, down := s.racks[read.GetRackId()], s.down[read.GetRackId()]
	s.mu.Unlock()
	if r == nil || down {
		return nil, fmt.Errorf("rack %s: owner not reachable", read.GetRackId())
	}
	return r.Read(ctx, read), nil
}

// ListRacks implements Store.
func (s *site) ListRacks(context.Context) ([]store.RackRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.RackRecord
	for id := range s.racks {
		out = append(out, store.RackRecord{RackID: id})
	}
	return out, nil
}

// JobRack implements Store.
func (s *site) JobRack(_ context.Context, id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.jobRack[id]; ok {
		return r, nil
	}
	return "", store.ErrNotFound
}

// ClusterParent implements Store.
func (s *site) ClusterParent(_ context.Context, id string) (store.ClusterParent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.parents[id]; ok {
		return p, nil
	}
	return store.ClusterParent{}, store.ErrNotFound
}

// ListClusterParents implements Store.
func (s *site) ListClusterParents(_ context.Context, limit int) ([]store.ClusterParent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []store.ClusterParent
	for _, p := range s.parents {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b store.ClusterParent) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// clusterParent records a cluster parent id over a batch of two switches
// on each of racks, whose children run g; it returns the parent and its
// children's ids, rack by rack.
func (s *site) clusterParent(id string, g gate, racks ...string) (store.ClusterParent, []string) {
	s.t.Helper()
	ctx := testCtx(s.t)
	p := store.ClusterParent{ID: id, Type: messages.TypeSwitchMtlsDisable.String(), Method: "/m", Member: "a"}
	var children []string
	for _, rack := range racks {
		s.mu.Lock()
		e := s.eng[rack]
		s.mu.Unlock()
		rep, err := e.CreateBatch(ctx, messages.JobSpec{Type: messages.TypeSwitchMtlsDisable, RackID: rack},
			[]messages.BatchTarget{{RackID: rack, NodeID: "sw1", Workflow: g}, {RackID: rack, NodeID: "sw2", Workflow: g}}, nil)
		if err != nil {
			s.t.Fatal(err)
		}
		s.mu.Lock()
		s.jobRack[rep.Parent.ID] = rack
		for _, c := range rep.Admitted {
			s.jobRack[c.ID] = rack
			children = append(children, c.ID)
		}
		s.mu.Unlock()
		p.Racks = append(p.Racks, store.ClusterParentRack{RackID: rack, JobID: rep.Parent.ID})
	}
	p.Racks = append(p.Racks, store.ClusterParentRack{RackID: "r9", Failure: "no switch answered"})
	p.CreatedAt = time.Now()
	s.mu.Lock()
	s.parents[p.ID] = p
	s.mu.Unlock()
	return p, children
}

// waitRackBatches waits until every rack batch of p has ended.
func (s *site) waitRackBatches(p store.ClusterParent) {
	s.t.Helper()
	for _, rk := range p.Racks {
		if rk.JobID == "" {
			continue
		}
		s.mu.Lock()
		e := s.eng[rk.RackID]
		s.mu.Unlock()
		if err := e.Wait(testCtx(s.t), rk.JobID); err != nil {
			s.t.Fatal(err)
		}
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// create admits a job on rack's engine and records its rack.
func (s *site) create(rack, node string, g gate) messages.JobSnapshot {
	s.t.Helper()
	s.mu.Lock()
	e := s.eng[rack]
	s.mu.Unlock()
	j, err := e.Create(testCtx(s.t), messages.JobSpec{Type: messages.TypeColdRebootSequence, RackID: rack, NodeID: node}, g, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.jobRack[j.ID] = rack
	s.mu.Unlock()
	return j
}

func TestListAnswersEveryRacksJobsNewestFirstAndNamesTheRacksNotRead(t *testing.T) {
	s := newSite(t, "r1", "r2")
	g := gate{release: make(chan struct{})}
	defer close(g.release)
	first := s.create("r1", "n1", g)
	second := s.create("r2", "n1", g)
	l, err := s.site.List(testCtx(t), messages.ListJobs{TopLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range l.Jobs {
		ids = append(ids, j.ID)
	}
	if !slices.Equal(ids, []string{second.ID, first.ID}) {
		t.Fatalf("listed %v, want the r2 job then the r1 job (newest first): %s, %s", ids, second.ID, first.ID)
	}
	if l.Jobs[1].RackID != "r1" || l.Jobs[1].State == messages.StateUnspecified {
		t.Fatalf("listed r1 job %+v", l.Jobs[1])
	}

	l, err = s.site.List(testCtx(t), messages.ListJobs{RackID: "r1"})
	if err != nil || len(l.Jobs) != 1 || l.Jobs[0].ID != first.ID {
		t.Fatalf("r1's jobs: %+v, %v", l.Jobs, err)
	}

	s.setDown("r2", true)
	l, err = s.site.List(testCtx(t), messages.ListJobs{TopLevel: true})
	var u *UnreachableError
	if !errors.As(err, &u) || !slices.Equal(u.Unreachable(), []string{"r2"}) {
		t.Fatalf("with r2's owner down: %v, want r2 named unreachable", err)
	}
	if len(l.Jobs) != 1 || l.Jobs[0].ID != first.ID {
		t.Fatalf("with r2's owner down: listed %+v, want r1's job", l.Jobs)
	}
	s.setDown("r1", true)
	if _, err := s.site.List(testCtx(t), messages.ListJobs{}); err == nil || errors.As(err, &u) {
		t.Fatalf("with every owner down: %v, want a failure", err)
	}
}

func TestGetReadsAJobFromItsRackAndAggregatesAClusterParent(t *testing.T) {
	s := newSite(t, "r1", "r2")
	ctx := testCtx(t)
	g := gate{release: make(chan struct{})}
	p, children := s.clusterParent("cluster-parent-1", g, "r1", "r2")

	got, err := s.site.Get(ctx, children[2], false)
	if err != nil || len(got) != 1 || got[0].ID != children[2] || got[0].RackID != "r2" || got[0].NodeID != "sw1" {
		t.Fatalf("Get of an r2 child: %+v, %v", got, err)
	}
	got, err = s.site.Get(ctx, p.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].ID != p.ID || got[0].State != messages.StateRunning || !slices.Equal(got[0].ChildIDs, children) || len(got) != 5 {
		t.Fatalf("cluster parent while its children run: %+v", got)
	}
	close(g.release)
	s.waitRackBatches(p)
	if got, err = s.site.Get(ctx, p.ID, true); err != nil {
		t.Fatal(err)
	}
	if got[0].State != messages.StateCompleted || got[0].Description == "" {
		t.Fatalf("cluster parent after its children completed: %+v", got[0])
	}
	if _, err := s.site.Get(ctx, "no-such-job", true); !errors.Is(err, messages.ErrJobNotFound) {
		t.Fatalf("unknown id: %v, want ErrJobNotFound", err)
	}
}

// The whole site's listing shows each cluster parent as a job of its own,
// with its state aggregated from its racks' batches, beside those batches;
// a rack's listing shows none. A parent that has not ended is left out
// while one of its racks' owners does not answer, and the rack is named;
// one that has ended is still shown.
func TestListShowsClusterParentsWithTheirAggregateState(t *testing.T) {
	s := newSite(t, "r1", "r2", "r3")
	ctx := testCtx(t)
	g := gate{release: make(chan struct{})}
	p, _ := s.clusterParent("cluster-parent-1", g, "r1", "r2")
	later := s.create("r3", "n1", gate{release: g.release})
	listed := func(q messages.ListJobs) (map[string]messages.JobSnapshot, []string, error) {
		t.Helper()
		l, err := s.site.List(ctx, q)
		byID := map[string]messages.JobSnapshot{}
		var ids []string
		for _, j := range l.Jobs {
			byID[j.ID] = j
			ids = append(ids, j.ID)
		}
		return byID, ids, err
	}
	jobs, ids, err := listed(messages.ListJobs{TopLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{later.ID, p.ID, p.Racks[1].JobID, p.Racks[0].JobID}
	if !slices.Equal(ids, want) {
		t.Fatalf("listed %v, want the r3 job, the cluster parent, then its racks' batches %v", ids, want)
	}
	if got := jobs[p.ID]; got.State != messages.StateRunning || got.Type != messages.TypeSwitchMtlsDisable ||
		len(got.ChildIDs) != 4 || got.Description == "" {
		t.Fatalf("cluster parent while its children run: %+v", got)
	}
	if jobs, _, err := listed(messages.ListJobs{RackID: "r1", TopLevel: true}); err != nil || len(jobs) != 1 {
		t.Fatalf("r1's listing: %v, %v; want its batch alone", jobs, err)
	}

	close(g.release)
	s.waitRackBatches(p)
	jobs, _, err = listed(messages.ListJobs{TopLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := jobs[p.ID]; got.State != messages.StateCompleted {
		t.Fatalf("cluster parent after its children completed: %+v", got)
	}

	g2 := gate{release: make(chan struct{})}
	defer close(g2.release)
	running, _ := s.clusterParent("cluster-parent-2", g2, "r1", "r3")
	s.setDown("r3", true)
	jobs, _, err = listed(messages.ListJobs{TopLevel: true})
	var u *UnreachableError
	if !errors.As(err, &u) || !slices.Equal(u.Unreachable(), []string{"r3"}) {
		t.Fatalf("with r3's owner down: %v, want r3 named unreachable", err)
	}
	if _, shown := jobs[running.ID]; shown {
		t.Errorf("a running parent over r3 was listed with r3's owner down: %+v", jobs[running.ID])
	}
	if got := jobs[p.ID]; got.State != messages.StateCompleted {
		t.Errorf("the ended parent with r3's owner down: %+v", got)
	}
	s.setDown("r3", false)
	s.setDown("r2", true)
	_, _, err = listed(messages.ListJobs{TopLevel: true})
	if !errors.As(err, &u) || !slices.Equal(u.Unreachable(), []string{"r2"}) {
		t.Fatalf("with r2's owner down: %v, want r2 named unreachable", err)
	}
}

// next reads the subscription until match accepts a change.
func next(t *testing.T, sub *actors.Subscription, what string, match func(messages.JobChange) bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case c, open := <-sub.C():
			if !open {
				t.Fatalf("%s: the subscription ended (dropped %v)", what, sub.Dropped())
			}
			if match(c) {
				return
			}
		case <-deadline:
			t.Fatalf("%s: not seen", what)
		}
	}
}

func TestSubscribeFollowsEveryRackAndDropsWhenARackChangesOwner(t *testing.T) {
	s := newSite(t, "r1", "r2")
	ctx := testCtx(t)
	sub := s.site.Subscribe(0)
	defer sub.Close()
	// Changes are followed from each rack's first poll on.
	for range 2 {
		select {
		case <-s.followed:
		case <-ctx.Done():
			t.Fatal("the racks' change logs not reached")
		}
	}
	g := gate{release: make(chan struct{})}

	j := s.create("r2", "n1", g)
	next(t, sub, "the hold of r2's job", func(c messages.JobChange) bool {
		return c.Hold != nil && c.Hold.Held && c.Hold.RackID == "r2" && c.Hold.NodeID == "n1" && c.Hold.Job == j.ID
	})
	next(t, sub, "r2's job running", func(c messages.JobChange) bool {
		return c.Job != nil && c.Job.ID == j.ID && c.Job.State == messages.StateRunning && c.Job.Description == "waiting at the gate"
	})
	close(g.release)
	next(t, sub, "r2's job completed", func(c messages.JobChange) bool {
		return c.Job != nil && c.Job.ID == j.ID && c.Job.State == messages.StateCompleted
	})
	holds, err := s.site.Holds(ctx)
	if err != nil || len(holds) != 0 {
		t.Fatalf("holds after the job: %+v, %v", holds, err)
	}

	// r1 changes owner: its new engine's log does not know the cursor,
	// so changes may have been lost and the subscription is dropped.
	s.open("r1")
	select {
	case _, open := <-drain(sub):
		if open || !sub.Dropped() {
			t.Fatalf("subscription after r1 changed owner: open %v, dropped %v", open, sub.Dropped())
		}
	case <-ctx.Done():
		t.Fatal("subscription not dropped after r1 changed owner")
	}
	// A new subscriber follows the new owner.
	sub2 := s.site.Subscribe(0)
	defer sub2.Close()
	k := s.create("r1", "n2", gate{release: closed()})
	next(t, sub2, "the new owner's job", func(c messages.JobChange) bool { return c.Job != nil && c.Job.ID == k.ID && c.Job.State.IsTerminal() })
}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// drain reads sub until it ends, then reports on the returned channel.
func drain(sub *actors.Subscription) <-chan messages.JobChange {
	out := make(chan messages.JobChange)
	go func() {
		for range sub.C() {
		}
		close(out)
	}()
	return out
}

func TestChangeLogResetsACursorThatFellBehindOrIsAnotherLogs(t *testing.T) {
	l := newChangeLog(4)
	ctx := t.Context()
	_, id, seq, lost, _ := l.since(ctx, "", 0, 10, 0)
	if lost || id == "" || seq != 0 {
		t.Fatalf("first contact: id %q seq %d lost %v", id, seq, lost)
	}
	for i := range 3 {
		l.add(&rackpb.JobChangeRecord{Evicted: fmt.Sprint(i)})
	}
	got, _, seq, lost, _ := l.since(ctx, id, 0, 2, 0)
	if lost || len(got) != 2 || got[0].GetEvicted() != "0" || seq != 2 {
		t.Fatalf("read of 2 from 0: %v seq %d lost %v", got, seq, lost)
	}
	for i := 3; i < 12; i++ {
		l.add(&rackpb.JobChangeRecord{Evicted: fmt.Sprint(i)})
	}
	if _, _, _, lost, _ := l.since(ctx, id, seq, 10, 0); !lost {
		t.Fatal("a cursor trimmed out of the log is not reported lost")
	}
	if _, _, _, lost, _ := l.since(ctx, "another-log", 1, 10, 0); !lost {
		t.Fatal("another log's cursor is not reported lost")
	}
	// A wait ends with the change that arrives.
	_, id, seq, _, _ = l.since(ctx, id, 1<<40, 10, 0)
	done := make(chan []*rackpb.JobChangeRecord)
	go func() {
		got, _, _, _, _ := l.since(ctx, id, seq, 10, time.Minute)
		done <- got
	}()
	l.add(&rackpb.JobChangeRecord{Evicted: "late"})
	if got := <-done; len(got) != 1 || got[0].GetEvicted() != "late" {
		t.Fatalf("waited read: %v", got)
	}
	l.close()
	if _, _, _, _, closed := l.since(ctx, id, seq, 10, time.Minute); !closed {
		t.Fatal("a closed log does not say so")
	}
}
