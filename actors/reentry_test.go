package actors

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/rmsd/rmsd/messages"
)

// reentry detects an actor handler running inside another: it counts, per
// goroutine, the handlers on that goroutine's stack, and records any call
// that finds one already there.
type reentry struct {
	mu     sync.Mutex
	depth  map[uint64]int
	calls  int
	nested []string
}

func newReentry() *reentry { return &reentry{depth: map[uint64]int{}} }

// goroutineID reads the current goroutine's id from its stack header.
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

func (d *reentry) middleware(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		id := goroutineID()
		d.mu.Lock()
		d.calls++
		if d.depth[id] > 0 {
			d.nested = append(d.nested, fmt.Sprintf("%T handled inside another handler (%s)", env.Message, c.Self().Id))
		}
		d.depth[id]++
		d.mu.Unlock()
		defer func() {
			d.mu.Lock()
			d.depth[id]--
			d.mu.Unlock()
		}()
		next(c, env)
	}
}

func (d *reentry) report() (calls int, nested []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls, append([]string(nil), d.nested...)
}

// relay forwards every string it receives to next; the last one in a
// chain tells done.
type relay struct {
	next *actor.PID
	done chan<- struct{}
}

func (r *relay) Receive(c actor.Context) {
	if _, ok := c.Message().(string); !ok {
		return
	}
	if r.next != nil {
		c.Send(r.next, "pass")
		return
	}
	close(r.done)
}

// The detector can fail: on protoactor's synchronized dispatcher, which
// runs a mailbox on the sender's goroutine, a send from one handler runs
// the receiver's handler inside it, and the detector names it.
func TestReentryDetectorCatchesANestedHandler(t *testing.T) {
	sys := quietSystem()
	defer sys.Shutdown()
	d := newReentry()
	done := make(chan struct{})
	props := func(a actor.Actor) *actor.Props {
		return actor.PropsFromProducer(func() actor.Actor { return a },
			actor.WithDispatcher(actor.NewSynchronizedDispatcher(300)), actor.WithReceiverMiddleware(d.middleware))
	}
	last := sys.Root.Spawn(props(&relay{done: done}))
	first := sys.Root.Spawn(props(&relay{next: last}))
	sys.Root.Send(first, "go")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the relay never reached its end")
	}
	if _, nested := d.report(); len(nested) == 0 {
		t.Fatal("a handler run inside another was not detected")
	}
	sys.Root.Stop(first)
	sys.Root.Stop(last)
}

// No engine actor's handler runs inside another's, through admission,
// batches, cancellation, leases, waits and a registry crash.
func TestNoEngineHandlerRunsInsideAnother(t *testing.T) {
	d := newReentry()
	handlerMiddleware = d.middleware
	t.Cleanup(func() { handlerMiddleware = nil })
	e, _ := newEngine(t, Options{AskTimeout: 50 * time.Millisecond})

	g := newGate()
	rep := mustBatch(t, e, messages.TypeFirmwareUpdate, targets(g, "r", "n1", "r", "n2", "r", "n3"))
	g.waitRunning(t, e, 3)
	leaf := mustCreate(t, e, messages.JobSpec{RackID: "r", NodeID: "n4"}, newGate())
	const leaseID = "lease-reentry"
	if rep, err := e.Lease(testCtx(t), messages.AcquireLease{ID: leaseID, Operation: "test",
		Nodes: []messages.NodeRef{{RackID: "r", NodeID: "n5"}}, TTL: time.Minute}); err != nil || rep.Err != nil {
		t.Fatalf("lease: %+v %v", rep, err)
	}
	if _, err := e.ask(testCtx(t), &crashRequest{}); err == nil {
		t.Fatal("the crashing request was answered")
	}
	if err := e.Release(testCtx(t), leaseID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Cancel(testCtx(t), rep.Parent.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Cancel(testCtx(t), leaf.ID); err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, e, rep.Parent.ID, leaf.ID)

	calls, nested := d.report()
	if calls < 20 {
		t.Fatalf("the detector saw %d handler calls: it is not wired to the engine's actors", calls)
	}
	if len(nested) > 0 {
		t.Fatalf("%d handlers ran inside another, e.g. %s", len(nested), nested[0])
	}
}
