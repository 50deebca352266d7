package actors

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/google/uuid"

	"github.com/rmsd/rmsd/messages"
)

// Admission benchmarks are read as ratios against the baseline round trips
// measured in the same run; the baseline actor uses the engine's mailbox
// (protoactor's default). Short runs suited to a shared 2-core machine:
//
//	go test -run '^$' -bench 'AdmissionVsRoundTrip' -benchtime 20x -count 3 ./actors/
//	go test -run '^$' -bench 'Baseline|AdmitLeafJob' -benchtime 20000x -count 3 ./actors/
//	go test -run '^$' -bench 'StatusRead' -benchtime 200000x -count 5 ./actors/
//	go test -run '^$' -bench 'BatchSettle' -benchtime 3x -count 3 ./actors/
//	go test -run '^$' -bench 'ReadParent' -benchtime 100000x -count 5 ./actors/
//	go test -run '^$' -bench 'RetainedPerTerminalJob' -benchtime 1x ./actors/

type echoActor struct{}

func (echoActor) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*messages.GetJob); ok {
		ctx.Respond(&messages.GetJobReply{})
	}
}

// BenchmarkBaselineRequestFuture is one raw protoactor RequestFuture round
// trip to an actor that answers at once, on the mailbox and dispatcher the
// engine's actors use.
func BenchmarkBaselineRequestFuture(b *testing.B) {
	sys := quietSystem()
	defer sys.Shutdown()
	d := newDispatcher(defaultWorkers())
	defer d.close()
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return echoActor{} }, actor.WithDispatcher(d)))
	defer func() { _ = sys.Root.StopFuture(pid).Wait() }()
	for b.Loop() {
		if _, err := sys.Root.RequestFuture(pid, &messages.GetJob{}, time.Second).Result(); err != nil {
			b.Fatal(err)
		}
	}
}

// spawnPairActor answers a request, then does in raw protoactor what an
// admission must do after answering: spawn a job-like actor that starts a
// goroutine and a lock-like actor that watches it.
type spawnPairActor struct {
	props  func(actor.Actor) *actor.Props
	parked chan struct{}
}

type goroutineActor struct{ parked <-chan struct{} }

func (g goroutineActor) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); ok {
		go func() { <-g.parked }()
	}
}

type watcherActor struct{ target *actor.PID }

func (w watcherActor) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*actor.Started); ok {
		ctx.Watch(w.target)
	}
}

func (s *spawnPairActor) Receive(ctx actor.Context) {
	if _, ok := ctx.Message().(*messages.GetJob); ok {
		ctx.Respond(&messages.GetJobReply{})
		job := ctx.ActorSystem().Root.Spawn(s.props(goroutineActor{parked: s.parked}))
		ctx.Watch(job)
		lock := ctx.ActorSystem().Root.Spawn(s.props(watcherActor{target: job}))
		ctx.Watch(lock)
	}
}

// BenchmarkBaselineSpawnPair is the floor under admission: the raw round
// trip plus the two spawns, one goroutine and three watches an admitted
// job costs, in bare protoactor on the engine's mailbox and dispatcher.
func BenchmarkBaselineSpawnPair(b *testing.B) {
	sys := quietSystem()
	defer sys.Shutdown()
	d := newDispatcher(defaultWorkers())
	defer d.close()
	parked := make(chan struct{})
	defer close(parked)
	props := func(a actor.Actor) *actor.Props {
		return actor.PropsFromProducer(func() actor.Actor { return a }, actor.WithDispatcher(d))
	}
	pid := sys.Root.Spawn(props(&spawnPairActor{props: props, parked: parked}))
	defer func() { _ = sys.Root.StopFuture(pid).Wait() }()
	for b.Loop() {
		if _, err := sys.Root.RequestFuture(pid, &messages.GetJob{}, time.Second).Result(); err != nil {
			b.Fatal(err)
		}
	}
}

var doneWorkflow = messages.WorkflowFunc(func(_ context.Context, job messages.Reporter) {
	_ = job.Complete("Completed", `{"status":"completed"}`)
})

// BenchmarkAdmitLeafJob is one leaf admission through the registry: node
// check, record, node lock, job actor and worker start. The jobs complete
// right away, so their completion work runs alongside.
func BenchmarkAdmitLeafJob(b *testing.B) {
	e, _ := newEngine(b, Options{MaxTrackedJobs: 10_000_000})
	ctx := context.Background()
	nodes := make([]string, 0, 1<<16)
	for i := range cap(nodes) {
		nodes = append(nodes, "node-"+strconv.Itoa(i))
	}
	i := 0
	for b.Loop() {
		if _, err := e.Create(ctx, messages.JobSpec{RackID: strconv.Itoa(i >> 16), NodeID: nodes[i&(1<<16-1)]}, doneWorkflow, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkBatchSettle times one batch of N children with trivial
// workflows from admission until the parent is terminal: admission, every
// child's run and seal, and the parent's verdict.
func BenchmarkBatchSettle(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			e, _ := newEngine(b, Options{MaxTrackedJobs: 10_000_000})
			ctx := context.Background()
			ts := make([]messages.BatchTarget, n)
			round := 0
			for b.Loop() {
				b.StopTimer()
				for i := range ts {
					ts[i] = messages.BatchTarget{RackID: "r" + strconv.Itoa(round), NodeID: "n" + strconv.Itoa(i), Workflow: doneWorkflow}
				}
				round++
				runtime.GC()
				b.StartTimer()
				rep, err := e.CreateBatch(ctx, messages.JobSpec{Type: messages.TypeFirmwareUpdate}, ts, nil)
				if err != nil || len(rep.Admitted) != n {
					b.Fatalf("%d admitted: %v", len(rep.Admitted), err)
				}
				if err := e.Wait(ctx, rep.Parent.ID); err != nil {
					b.Fatal(err)
				}
				if p := mustGet(b, e, rep.Parent.ID); p.State != messages.StateCompleted {
					b.Fatalf("parent %+v", p)
				}
			}
		})
	}
}

// BenchmarkReadParent reads a leaf, and an open batch parent of 10,000
// children (all running), through the facade.
func BenchmarkReadParent(b *testing.B) {
	e, _ := newEngine(b, Options{MaxTrackedJobs: 100_000})
	ctx := context.Background()
	g := newGate()
	defer close(g.release)
	leaf := mustCreate(b, e, messages.JobSpec{RackID: "leaf", NodeID: "n"}, g)
	ts := make([]messages.BatchTarget, 10_000)
	for i := range ts {
		ts[i] = messages.BatchTarget{RackID: "r", NodeID: "n" + strconv.Itoa(i), Workflow: g}
	}
	rep, err := e.CreateBatch(ctx, messages.JobSpec{Type: messages.TypeFirmwareUpdate}, ts, nil)
	if err != nil {
		b.Fatal(err)
	}
	g.waitStarted(b, len(ts)+1)
	for _, c := range []struct{ name, id string }{{"leaf", leaf.ID}, {"open-parent-10000", rep.Parent.ID}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				jobs, err := e.Get(ctx, c.id, false)
				if err != nil || jobs[0].State != messages.StateRunning {
					b.Fatalf("%+v %v", jobs, err)
				}
			}
		})
	}
}

// preloadTerminal fills a store with n completed leaf jobs and returns one id.
func preloadTerminal(s *jobStore, n int, at time.Time) string {
	var id string
	for i := range n {
		id = uuid.NewString()
		node := fmt.Sprintf("node-%06d", i)
		for _, ev := range []messages.Event{
			messages.JobCreated{ID: id, RackID: "rack-01", NodeID: node, State: messages.StateQueued, Description: "Queued", At: at},
			messages.JobStarted{ID: id, Description: "Flashing BMC", At: at},
			messages.JobCompleted{ID: id, Description: "Completed", ResultJSON: `{"status":"completed"}`, At: at},
		} {
			if err := s.apply(ev); err != nil {
				panic(err)
			}
		}
	}
	return id
}

// BenchmarkStatusRead reads one job's snapshot with N jobs tracked.
func BenchmarkStatusRead(b *testing.B) {
	for _, n := range []int{100, 10_000, 100_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			store := newJobStore()
			clk := newTestClock()
			id := preloadTerminal(store, n, clk.Now())
			sys := quietSystem()
			e, err := newEngineWithStore(sys, Options{MaxTrackedJobs: 2 * n, Now: clk.Now, ReaperTicks: make(chan time.Time)}, store)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { e.Close(); sys.Shutdown() }()
			ctx := context.Background()
			runtime.GC() // settle the preload's garbage before timing
			for b.Loop() {
				if _, err := e.Get(ctx, id, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkRetainedPerTerminalJob admits 100,000 jobs through the engine,
// lets them all complete and their actors stop, and reports the heap still
// held per job (B/job).
func BenchmarkRetainedPerTerminalJob(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		before := heapInUse()
		sys := quietSystem()
		e, err := New(sys, Options{MaxTrackedJobs: n, ReaperTicks: make(chan time.Time)})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		ids := make([]string, 0, n)
		for i := range n {
			s, err := e.Create(ctx, messages.JobSpec{RackID: "rack-01", NodeID: fmt.Sprintf("node-%06d", i)}, doneWorkflow, nil)
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		if err := e.Wait(ctx, ids...); err != nil {
			b.Fatal(err)
		}
		waitIdle(b, e)
		ids = nil
		after := heapInUse()
		b.ReportMetric(float64(after-before)/n, "B/job")
		e.Close()
		sys.Shutdown()
	}
}

// BenchmarkAdmitLeafJobOnly times admission alone: the admitted jobs wait
// at a gate. Every 1,000 admissions the timer stops, the jobs are released
// and the engine is left to go idle (every job and lock actor gone, garbage
// collected), so no teardown runs while admissions are timed.
func BenchmarkAdmitLeafJobOnly(b *testing.B) {
	e, _ := newEngine(b, Options{MaxTrackedJobs: 10_000_000})
	ctx := context.Background()
	const chunk = 1000
	heldUntil := func(gate <-chan struct{}) messages.Workflow {
		return messages.WorkflowFunc(func(wctx context.Context, job messages.Reporter) {
			select {
			case <-gate:
			case <-wctx.Done():
			}
			_ = job.Complete("Completed", "")
		})
	}
	gate := make(chan struct{})
	held := heldUntil(gate)
	ids := make([]string, 0, chunk)
	i := 0
	for b.Loop() {
		s, err := e.Create(ctx, messages.JobSpec{RackID: "r", NodeID: "node-" + strconv.Itoa(i)}, held, nil)
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, s.ID)
		i++
		if len(ids) == chunk {
			b.StopTimer()
			close(gate)
			if err := e.Wait(ctx, ids...); err != nil {
				b.Fatal(err)
			}
			waitIdle(b, e)
			gate = make(chan struct{})
			held = heldUntil(gate)
			ids = ids[:0]
			b.StartTimer()
		}
	}
	b.StopTimer()
	close(gate)
}

// waitIdle waits until the engine has no job or lock actor left, then
// collects garbage.
func waitIdle(b *testing.B, e *Engine) {
	eventually(b, "the engine goes idle", func() bool {
		l := listed(b, e)
		return len(l.jobs) == 0 && len(l.locks) == 0
	})
	runtime.GC()
}

// BenchmarkBaselineRequestFutureParallel is the raw round trip with
// concurrent callers (GOMAXPROCS goroutines).
func BenchmarkBaselineRequestFutureParallel(b *testing.B) {
	sys := quietSystem()
	defer sys.Shutdown()
	d := newDispatcher(defaultWorkers())
	defer d.close()
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return echoActor{} }, actor.WithDispatcher(d)))
	defer func() { _ = sys.Root.StopFuture(pid).Wait() }()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := sys.Root.RequestFuture(pid, &messages.GetJob{}, time.Second).Result(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAdmitLeafJobParallel admits leaf jobs from concurrent callers;
// the jobs complete at once, their completion work runs alongside.
func BenchmarkAdmitLeafJobParallel(b *testing.B) {
	e, _ := newEngine(b, Options{MaxTrackedJobs: 10_000_000})
	ctx := context.Background()
	var seq atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			if _, err := e.Create(ctx, messages.JobSpec{RackID: "r", NodeID: "node-" + strconv.FormatInt(n, 10)}, doneWorkflow, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkAdmissionVsRoundTrip alternates, in one process, rounds of raw
// request/response round trips (an actor on the engine's mailbox and
// dispatcher that answers at once) and rounds of job admissions (jobs held
// at a gate, released and the engine left idle between rounds, untimed),
// and reports the median time of each and their ratio: the share of the
// raw round-trip rate that admission reaches. Alternating keeps a noisy
// machine's slow phases from landing on one side only.
func BenchmarkAdmissionVsRoundTrip(b *testing.B) {
	const round = 1000
	sys := quietSystem()
	defer sys.Shutdown()
	d := newDispatcher(defaultWorkers())
	defer d.close()
	echo := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return echoActor{} }, actor.WithDispatcher(d)))
	defer func() { _ = sys.Root.StopFuture(echo).Wait() }()
	e, _ := newEngine(b, Options{MaxTrackedJobs: 10_000_000})
	ctx := context.Background()
	var raw, admit []float64
	node := 0
	for b.Loop() {
		t0 := time.Now()
		for range round {
			if _, err := sys.Root.RequestFuture(echo, &messages.GetJob{}, time.Second).Result(); err != nil {
				b.Fatal(err)
			}
		}
		raw = append(raw, float64(time.Since(t0).Nanoseconds())/round)

		gate := make(chan struct{})
		held := messages.WorkflowFunc(func(wctx context.Context, job messages.Reporter) {
			select {
			case <-gate:
			case <-wctx.Done():
			}
			_ = job.Complete("Completed", "")
		})
		ids := make([]string, 0, round)
		t0 = time.Now()
		for range round {
			s, err := e.Create(ctx, messages.JobSpec{RackID: "r", NodeID: "node-" + strconv.Itoa(node)}, held, nil)
			if err != nil {
				b.Fatal(err)
			}
			node++
			ids = append(ids, s.ID)
		}
		admit = append(admit, float64(time.Since(t0).Nanoseconds())/round)
		close(gate)
		if err := e.Wait(ctx, ids...); err != nil {
			b.Fatal(err)
		}
		waitIdle(b, e)
	}
	r, a := median(raw), median(admit)
	b.ReportMetric(r, "roundtrip-ns")
	b.ReportMetric(a, "admission-ns")
	b.ReportMetric(r/a*100, "%-of-roundtrip-rate")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
