package actors

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// chaosWorkflow picks one behaviour per job; a share of them wait at a gate
// that opens only after the chaos ends, so they are in flight throughout.
func chaosWorkflow(rng *rand.Rand, gate <-chan struct{}) messages.Workflow {
	kind := rng.IntN(6)
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		job.Progress("step 1")
		switch kind {
		case 0:
			_ = job.Complete("Completed", `{"status":"completed"}`)
		case 1:
			_ = job.Fail(messages.NewFailure(messages.ErrorServerError, "bmc said no"))
		case 2:
			panic("workflow panic")
		case 3: // returns without a terminal state
		default:
			select {
			case <-gate:
				_ = job.Complete("Completed", `{"status":"already_up_to_date"}`)
			case <-ctx.Done():
				_ = job.Fail(messages.NewFailure(messages.ErrorOther, "cancelled"))
			}
		}
	})
}

func TestChaosEveryAdmittedJobEndsTerminalAndConsistent(t *testing.T) {
	e, _ := newEngine(t, Options{MaxTrackedJobs: 100000, AskTimeout: 250 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	gate := make(chan struct{})

	var mu sync.Mutex
	var leaves []string
	var batches []messages.CreateBatchReply
	var loadErr error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if loadErr == nil {
			loadErr = err
		}
	}

	const producers, perProducer = 6, 100
	var load sync.WaitGroup
	for p := range producers {
		load.Add(1)
		go func() {
			defer load.Done()
			rng := rand.New(rand.NewPCG(uint64(p), 7))
			for i := range perProducer {
				if i%5 == 4 { // a batch of 1–4 children on shared nodes
					var ts []messages.BatchTarget
					for range 1 + rng.IntN(4) {
						ts = append(ts, messages.BatchTarget{RackID: "rack", NodeID: fmt.Sprintf("n%d", rng.IntN(80)), Workflow: chaosWorkflow(rng, gate)})
					}
					typ := []messages.JobType{messages.TypeFirmwareUpdate, messages.TypeSwitchSystemImageUpdate}[rng.IntN(2)]
					rep, err := e.CreateBatch(ctx, messages.JobSpec{Type: typ}, ts, nil)
					if err != nil {
						fail(fmt.Errorf("batch: %w", err))
						return
					}
					if len(rep.Admitted) == 0 {
						if _, err := e.Seal(ctx, rep.Parent.ID, messages.Outcome{State: messages.StateFailed, Code: messages.ErrorOther, Message: "no jobs created"}); err != nil {
							fail(fmt.Errorf("seal empty batch: %w", err))
							return
						}
					}
					mu.Lock()
					batches = append(batches, rep)
					mu.Unlock()
					continue
				}
				s, err := e.Create(ctx, messages.JobSpec{RackID: "rack", NodeID: fmt.Sprintf("n%d", rng.IntN(80))}, chaosWorkflow(rng, gate), nil)
				if errors.Is(err, messages.ErrNodeBusy) {
					continue
				}
				if err != nil {
					fail(fmt.Errorf("create: %w", err))
					return
				}
				mu.Lock()
				leaves = append(leaves, s.ID)
				mu.Unlock()
			}
		}()
	}

	loadDone := make(chan struct{})
	go func() { load.Wait(); close(loadDone) }()
	rng := rand.New(rand.NewPCG(42, 42))
	kills := map[string]int{}
	for round := 0; round < 2000; round++ {
		loaded := false
		select {
		case <-loadDone:
			loaded = true
		default:
		}
		if loaded && round >= 300 { // keeps hitting gated, in-flight jobs after the load
			break
		}
		l := listed(t, e)
		victim, kind := chaosVictim(rng, e, l)
		if victim != nil {
			kills[kind]++
			switch rng.IntN(3) {
			case 0:
				e.sys.Root.Stop(victim)
			case 1:
				e.sys.Root.Poison(victim)
			default:
				e.sys.Root.Send(victim, crashActor{})
			}
		}
		runtime.Gosched()
	}
	<-loadDone
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	close(gate)

	all := append([]string(nil), leaves...)
	for _, b := range batches {
		all = append(all, b.Parent.ID)
		all = append(all, ids(b.Admitted)...)
	}
	if err := e.Wait(ctx, all...); err != nil {
		t.Fatalf("jobs stuck non-terminal: %v", err)
	}
	for _, id := range all {
		if s := mustGet(t, e, id); !s.IsTerminal() {
			t.Fatalf("job %s not terminal: %+v", id, s)
		}
	}
	for _, b := range batches {
		jobs, err := e.Get(ctx, b.Parent.ID, true)
		if err != nil {
			t.Fatal(err)
		}
		checkParentReflectsChildren(t, jobs)
	}
	// A killed job's holds end when its workflow has returned, which the
	// worker reports to the registry just after the job reads terminal.
	var l actorList
	ok := false
	deadline := time.Now().Add(10 * time.Second)
	for !ok && time.Now().Before(deadline) {
		l = listed(t, e)
		ok = l.HeldNodes == 0 && len(l.locks) == 0 && len(e.core.workflows.list()) == 0
		runtime.Gosched()
	}
	if !ok {
		t.Fatalf("orphan node locks: %d locked nodes, %d lock actors, workflows running %v", l.HeldNodes, len(l.locks), e.core.workflows.list())
	}
	t.Logf("%d leaves, %d batches, %d jobs; kills %v", len(leaves), len(batches), len(all), kills)
}

func chaosVictim(rng *rand.Rand, e *Engine, l actorList) (*actor.PID, string) {
	pick := func(ps []*actor.PID) *actor.PID {
		if len(ps) == 0 {
			return nil
		}
		return ps[rng.IntN(len(ps))]
	}
	switch rng.IntN(10) {
	case 0:
		return e.core.registry.Load(), "registry"
	case 1, 2:
		return pick(l.locks), "lock"
	case 3, 4:
		return pick(l.batches), "batch"
	case 5, 6, 7:
		return pick(l.jobs), "job"
	default:
		return nil, "none"
	}
}

func checkParentReflectsChildren(t *testing.T, jobs []messages.JobSnapshot) {
	t.Helper()
	p, kids := jobs[0], jobs[1:]
	if len(p.ChildIDs) == 0 {
		if p.State != messages.StateFailed {
			t.Fatalf("empty batch parent %+v", p)
		}
		return
	}
	var completed, failed int
	for _, k := range kids {
		switch k.State {
		case messages.StateCompleted:
			completed++
		case messages.StateFailed:
			failed++
		default:
			t.Fatalf("child %s not terminal", k.ID)
		}
	}
	if failed > 0 || len(kids) < len(p.ChildIDs) {
		want := fmt.Sprintf("Batch complete: %d/%d succeeded, %d failed", completed, len(p.ChildIDs), failed)
		if p.State != messages.StateFailed || !strings.HasPrefix(p.Description, want) {
			t.Fatalf("parent %q (%v), want %q", p.Description, p.State, want)
		}
		return
	}
	if p.State != messages.StateCompleted {
		t.Fatalf("parent %+v with all children completed", p)
	}
}
