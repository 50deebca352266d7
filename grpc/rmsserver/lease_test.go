package rmsserver

import (
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/messages"
)

// A leased operation runs under a context that ends half-way through its
// lease's TTL, and the lease is released only once the operation returned:
// an operation that ignores its cancelled context for a while keeps its
// node held meanwhile, however long that is.
func TestLeasedOperationIsCancelledBeforeItsLeaseAndHoldsItUntilItReturns(t *testing.T) {
	// The operation's context ends half-way (5 s); the other half is the margin
	// a loaded machine has to probe the node before the lease lapses.
	const ttl = 10 * time.Second
	e := newTestEngine(t)
	m := &rackManager{deps: Deps{Jobs: e, LeaseTTL: ttl}, log: zerolog.Nop()}
	n := hw.Node{RackID: "r", ID: "n"}
	l, err := m.lease(rpcContext(t), "SetPowerState", nil, []hw.Node{n}, false)
	if err != nil || l.err != nil {
		t.Fatalf("lease: %v %v", err, l.err)
	}
	granted := time.Now() // the lease expires about a TTL after this
	if dl, ok := l.ctx.Deadline(); !ok || dl.After(granted.Add(ttl/2)) {
		t.Fatalf("operation deadline %v (set %v), want by %v: half-way through the lease's TTL", dl, ok, granted.Add(ttl/2))
	}
	late := make(chan struct{})   // the operation's context has ended; it goes on
	finish := make(chan struct{}) // lets the operation return
	done := make(chan struct{})
	go func() { // the RPC: the operation, then the release
		defer close(done)
		defer l.release()
		<-l.ctx.Done()
		close(late)
		<-finish // ignores its context for a while
	}()
	select {
	case <-late:
	case <-time.After(ttl):
		t.Fatal("the operation's context did not end within the lease's TTL")
	}
	probe := func(id string) error {
		rep, err := e.Lease(rpcContext(t), messages.AcquireLease{ID: id, Operation: "probe", Nodes: []messages.NodeRef{{RackID: "r", NodeID: "n"}}})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Err == nil {
			if err := e.Release(rpcContext(t), id); err != nil {
				t.Fatal(err)
			}
		}
		return rep.Err
	}
	if err := probe("probe-1"); !errors.Is(err, messages.ErrNodeBusy) {
		t.Fatalf("node taken while the operation still runs past its context: %v", err)
	}
	close(finish)
	<-done
	if err := probe("probe-2"); err != nil {
		t.Fatalf("node still held after the operation returned: %v", err)
	}
}
