package member

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/cluster"

	"github.com/rmsd/rmsd/store"
)

// TestADrainingMemberMissingFromItsOwnViewKeepsItsBusyRack: a member's
// view of the membership lacks the member itself (it joined last and
// read its first topology before its own health port answered, or a poll
// of its own port timed out), while a job of one of its racks runs. It
// still places the rack on itself, and a drain then keeps the busy rack:
// the drain ends at its deadline with the job still in flight and the
// rack's service never closed (CI saw it handed over at once, its cold
// reboot interrupted).
//
// In a process of its own (inAlone), as every test that starts a remote.
func TestADrainingMemberMissingFromItsOwnViewKeepsItsBusyRack(t *testing.T) {
	if !inAlone(t) {
		return
	}
	port, auto := freePort(t), freePort(t)
	// The view will list another member only; the rack is one that the
	// others, whose view lists both, place on this member.
	other := memberAt("other", freePort(t))
	rackID := rackPlacedOn(t, []*cluster.Member{other, memberAt("self", port)})
	st := oneRack(t, rackID)
	jobEnded := make(chan struct{})
	endJob := sync.OnceFunc(func() { close(jobEnded) })
	busy := newHeldRack(jobEnded)
	var mu sync.Mutex
	opened := 0
	open := func(context.Context, string, func() (store.RackLease, bool), string) (RackService, error) {
		mu.Lock()
		defer mu.Unlock()
		if opened++; opened == 1 {
			return busy, nil
		}
		return nil, fmt.Errorf("rack opened again (%d times) while its first service runs a job", opened)
	}
	m, err := Start(Config{
		MemberID: "m-a", AdvertisedHost: "127.0.0.1", Port: port, Seeds: []string{fmt.Sprintf("127.0.0.1:%d", auto)}, AutomanagedPort: auto,
		MembershipTimeout: time.Second, HandOverTimeout: 100 * time.Millisecond, Store: st, OpenRack: open,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		endJob()
		m.Stop()
	}()
	untilServedBy(t, m, rackID, "m-a")

	// The member's view now lists only the other member.
	moveTopology(m, []*cluster.Member{other})
	if got, want := m.placement(rackID), m.sys.Address(); got != want {
		t.Fatalf("%s placed on %q by a member missing from its own view, want the member itself (%q)", rackID, got, want)
	}
	const drainFor = 2 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), drainFor)
	defer cancel()
	if n := m.Drain(ctx); n != 1 {
		t.Errorf("the drain returned with %d jobs in flight, want the busy rack's 1 still running at its %s deadline", n, drainFor)
	}
	select {
	case <-busy.closed:
		t.Fatal("the busy rack's service closed during the drain while its job ran: the rack was handed over")
	default:
	}
	select {
	case <-busy.draining:
	default:
		t.Error("the busy rack's service was never told to drain (it admits new jobs)")
	}
	mu.Lock()
	defer mu.Unlock()
	if opened != 1 {
		t.Errorf("rack opened %d times, want once", opened)
	}
}
