package racks

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rmsd/rmsd/hw"
)

// testWait bounds every wait of these tests; a wait that reaches it means
// the registry blocked where it must not.
const testWait = 20 * time.Second

// blockingObserver is an observer that tells of each call on entered and
// then waits for its answer on answer.
type blockingObserver struct {
	entered chan hw.Ref
	answer  chan error
}

func newBlockingObserver() *blockingObserver {
	return &blockingObserver{entered: make(chan hw.Ref, 8), answer: make(chan error)}
}

func (b *blockingObserver) observe(ref hw.Ref, _ *hw.Node) error {
	b.entered <- ref
	return <-b.answer
}

// await returns the next node the observer was called for.
func (b *blockingObserver) await(t *testing.T) hw.Ref {
	t.Helper()
	select {
	case ref := <-b.entered:
		return ref
	case <-time.After(testWait):
		t.Fatal("the observer was not called")
		return hw.Ref{}
	}
}

// within runs f and fails the test if it has not returned within testWait.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(testWait):
		t.Fatalf("%s did not return while a store write was stalled", what)
	}
}

// TestAStalledStoreWriteDoesNotStallLookups: while the observer (the
// store) holds a Create, look-ups answer without the pending node, a
// second Create of the same node or with the same BMC is refused as in
// progress, and once the observer fails the node is absent and may be
// registered again.
func TestAStalledStoreWriteDoesNotStallLookups(t *testing.T) {
	r := New(nil)
	if errs := r.Create([]hw.Node{node("r1", "c0", hw.ComputeGB200Nvidia)}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	obs := newBlockingObserver()
	r.Observe(obs.observe)

	c1 := node("r1", "c1", hw.ComputeGB200Nvidia)
	created := make(chan []error, 1)
	go func() { created <- r.Create([]hw.Node{c1}) }()
	if ref := obs.await(t); ref != c1.Ref() {
		t.Fatalf("observer called for %v, want %v", ref, c1.Ref())
	}

	within(t, "look-ups", func() {
		if _, err := r.Node("r1", "c0"); err != nil {
			t.Errorf("Node(r1, c0) during a pending create: %v", err)
		}
		if _, err := r.Node("r1", "c1"); !errors.Is(err, ErrNodeNotFound) {
			t.Errorf("Node(r1, c1) before its write ended: %v, want not found", err)
		}
		if got := r.Racks(); len(got) != 1 || got[0] != "r1" {
			t.Errorf("Racks() = %v", got)
		}
		if got := len(r.Nodes()); got != 1 {
			t.Errorf("%d nodes listed during a pending create, want 1", got)
		}
		if _, err := r.RackNodes("r1"); err != nil {
			t.Errorf("RackNodes(r1): %v", err)
		}
	})
	within(t, "a concurrent create of the same node", func() {
		errs := r.Create([]hw.Node{c1})
		if !errors.Is(errs[0], ErrConflict) || !strings.Contains(errs[0].Error(), "in progress") {
			t.Errorf("second create of a pending node: %v, want a conflict saying it is in progress", errs[0])
		}
		sameBMC := node("r1", "c2", hw.ComputeGB200Nvidia)
		sameBMC.BMC = c1.BMC
		errs = r.Create([]hw.Node{sameBMC})
		if !errors.Is(errs[0], ErrConflict) || !strings.Contains(errs[0].Error(), "in progress") {
			t.Errorf("create with the BMC of a pending node: %v, want a conflict saying it is in progress", errs[0])
		}
	})

	obs.answer <- errors.New("store stalled")
	var errs []error
	select {
	case errs = <-created:
	case <-time.After(testWait):
		t.Fatal("Create did not return after the observer answered")
	}
	if !errors.Is(errs[0], ErrUnavailable) || !strings.Contains(errs[0].Error(), "store stalled") {
		t.Fatalf("create the store refused: %v, want ErrUnavailable naming the cause", errs[0])
	}
	if _, err := r.Node("r1", "c1"); !errors.Is(err, ErrNodeNotFound) {
		t.Fatalf("a node the store refused is registered: %v", err)
	}

	r.Observe(nil)
	if errs := r.Create([]hw.Node{c1}); errs[0] != nil {
		t.Fatalf("create once the refused write is over: %v", errs[0])
	}
}

// TestPendingUpdatesAndDeletesDoNotStallLookups: while the observer holds
// an update or a deletion, look-ups answer with the node as it was, and
// another change of the node is refused as in progress.
func TestPendingUpdatesAndDeletesDoNotStallLookups(t *testing.T) {
	r := New(nil)
	c1 := node("r1", "c1", hw.ComputeGB200Nvidia)
	if errs := r.Create([]hw.Node{c1}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	obs := newBlockingObserver()
	r.Observe(obs.observe)
	changes := map[string]func() error{
		"update": func() error { return r.Update("r1", "c1", bmc("10.9.9.9"), nil) },
		"delete": func() error { return r.Delete("r1", "c1") },
	}
	for what, change := range changes {
		done := make(chan error, 1)
		go func() { done <- change() }()
		obs.await(t)
		within(t, "look-ups during a pending "+what, func() {
			if n, err := r.Node("r1", "c1"); err != nil || n.BMC.IP != c1.BMC.IP {
				t.Errorf("Node(r1, c1) during a pending %s = %v, %v; want it as it was", what, n.BMC, err)
			}
			if err := r.Delete("r1", "c1"); !errors.Is(err, ErrConflict) {
				t.Errorf("delete during a pending %s: %v, want in progress", what, err)
			}
		})
		obs.answer <- errors.New("store stalled")
		select {
		case err := <-done:
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("%s the store refused: %v", what, err)
			}
		case <-time.After(testWait):
			t.Fatalf("%s did not return after the observer answered", what)
		}
		if n, err := r.Node("r1", "c1"); err != nil || n.BMC.IP != c1.BMC.IP {
			t.Errorf("after a refused %s: %v, %v; want the node as it was", what, n.BMC, err)
		}
	}
}

// TestABatchStopsWritingAfterTheFirstStoreFailure: once the store refused
// one node of a CreateNodes batch, the others are refused at once with the
// same reason, without asking the store again; none is registered.
func TestABatchStopsWritingAfterTheFirstStoreFailure(t *testing.T) {
	r := New(nil)
	var calls atomic.Int32
	r.Observe(func(hw.Ref, *hw.Node) error {
		calls.Add(1)
		return errors.New("no answer from the database within 1s")
	})
	nodes := []hw.Node{node("r1", "c1", hw.ComputeGB200Nvidia), node("r1", "c2", hw.ComputeGB200Nvidia), node("r2", "c3", hw.ComputeGB200Nvidia)}
	errs := r.Create(nodes)
	for i, err := range errs {
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no answer from the database") {
			t.Errorf("node %s: %v, want ErrUnavailable with the store's reason", nodes[i].ID, err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the store was asked %d times, want once", n)
	}
	if got := r.Nodes(); len(got) != 0 {
		t.Errorf("nodes registered: %v", got)
	}
	if got := r.Racks(); len(got) != 0 {
		t.Errorf("racks registered: %v", got)
	}
}
