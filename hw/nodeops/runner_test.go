package nodeops

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func newRunner(t *testing.T, limit int) *Runner {
	t.Helper()
	pool := redfish.NewPool(redfish.Options{})
	t.Cleanup(pool.Close)
	return New(platform.Deps{Redfish: pool, Logger: zerolog.Nop()}, limit)
}

func fakeNode(id, ip string) hw.Node {
	return hw.Node{ID: id, RackID: "r", Type: hw.ComputeGB200Nvidia,
		BMC: &hw.Endpoint{IP: ip, Port: 443, Credentials: hw.UserPass("u", "p")}}
}

// meet returns an Op that waits until n operations are inside it at once,
// failing after a generous bound: it proves that n operations overlap.
func meet(t *testing.T, n int) Op {
	var mu sync.Mutex
	inside := 0
	all := make(chan struct{})
	return func(ctx context.Context, _ int, _ platform.Device) error {
		mu.Lock()
		inside++
		if inside == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("operations did not overlap")
		}
	}
}

func TestDifferentBMCsRunConcurrently(t *testing.T) {
	r := newRunner(t, 8)
	var nodes []hw.Node
	for i := 0; i < 8; i++ {
		nodes = append(nodes, fakeNode(fmt.Sprintf("n%d", i), fmt.Sprintf("127.0.66.%d", i+1)))
	}
	for i, err := range r.Each(context.Background(), nodes, meet(t, 8)) {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
	}
	if r.gates.size() != 0 {
		t.Fatalf("%d gates left behind", r.gates.size())
	}
}

// overlapCounter is an Op that records the most operations it saw at once.
type overlapCounter struct {
	inFlight, max atomic.Int32
}

func (o *overlapCounter) op(context.Context, int, platform.Device) error {
	n := o.inFlight.Add(1)
	for {
		m := o.max.Load()
		if n <= m || o.max.CompareAndSwap(m, n) {
			break
		}
	}
	for i := 0; i < 50; i++ {
		runtime.Gosched()
	}
	o.inFlight.Add(-1)
	return nil
}

func TestOneOperationPerBMCAtATime(t *testing.T) {
	r := newRunner(t, 16)
	var nodes []hw.Node
	for i := 0; i < 16; i++ {
		nodes = append(nodes, fakeNode(fmt.Sprintf("n%d", i), "127.0.66.9")) // one BMC
	}
	var c overlapCounter
	r.Each(context.Background(), nodes, c.op)
	if got := c.max.Load(); got != 1 {
		t.Fatalf("%d operations overlapped on one BMC", got)
	}
}

func TestConcurrencyBound(t *testing.T) {
	r := newRunner(t, 2)
	var nodes []hw.Node
	for i := 0; i < 6; i++ {
		nodes = append(nodes, fakeNode(fmt.Sprintf("n%d", i), fmt.Sprintf("127.0.66.%d", 20+i)))
	}
	var c overlapCounter
	r.Each(context.Background(), nodes, c.op)
	if got := c.max.Load(); got > 2 {
		t.Fatalf("%d operations ran at once with a bound of 2", got)
	}
	for _, err := range r.Each(context.Background(), nodes[:2], meet(t, 2)) {
		if err != nil {
			t.Fatalf("the bound of 2 must allow 2 at once: %v", err)
		}
	}
}

func TestNodeWithoutEndpointAndCancelledContext(t *testing.T) {
	r := newRunner(t, 1)
	bare := hw.Node{ID: "bare", Type: hw.ComputeGB200Nvidia}
	if err := r.One(context.Background(), bare, func(context.Context, int, platform.Device) error { return nil }); !errors.Is(err, ErrNoManagementEndpoint) {
		t.Fatalf("node without endpoints: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	called := false
	err := r.One(ctx, fakeNode("n", "127.0.66.30"), func(context.Context, int, platform.Device) error { called = true; return nil })
	if !errors.Is(err, context.Canceled) || called {
		t.Fatalf("cancelled: err %v, called %v", err, called)
	}
}

func TestPowerStateOfASimulatedRack(t *testing.T) {
	fleet, err := sim.Start(context.Background(), sim.Options{Network: 97, NoSwitchHosts: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	var nodes []hw.Node
	for _, sn := range fleet.Nodes() {
		bmc := sn.BMC
		nodes = append(nodes, hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc})
	}
	r := newRunner(t, 64)
	states := make([]platform.PowerState, len(nodes))
	errs := r.Each(context.Background(), nodes, func(ctx context.Context, i int, d platform.Device) (err error) {
		if d.ID() != nodes[i].ID {
			return fmt.Errorf("operation %d got the adapter of %s", i, d.ID())
		}
		states[i], err = d.PowerState(ctx)
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", nodes[i].ID, err)
		}
		if states[i] != platform.PowerStateOn && states[i] != platform.PowerStateOff {
			t.Fatalf("%s: state %q", nodes[i].ID, states[i])
		}
	}
}

func TestAHungBMCDoesNotStallOtherBMCs(t *testing.T) {
	r := newRunner(t, 2)
	hung := make(chan struct{})
	inside := make(chan struct{}, 8)
	var queued []hw.Node
	for i := 0; i < 6; i++ { // six requests for one BMC, the first of which hangs
		queued = append(queued, fakeNode(fmt.Sprintf("slow-%d", i), "127.0.66.40"))
	}
	slowDone := make(chan []error, 1)
	go func() {
		slowDone <- r.Each(context.Background(), queued, func(context.Context, int, platform.Device) error {
			inside <- struct{}{}
			<-hung
			return nil
		})
	}()
	<-inside // the first slow request holds its BMC's gate and a slot
	// Bounded, so a stall fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := r.One(ctx, fakeNode("idle", "127.0.66.41"), func(context.Context, int, platform.Device) error { return nil })
	if err != nil {
		t.Fatalf("idle BMC while another is hung: %v", err)
	}
	close(hung)
	for i, err := range <-slowDone {
		if err != nil {
			t.Fatalf("slow request %d: %v", i, err)
		}
	}
}

func TestAPanickingOperationIsThatNodesError(t *testing.T) {
	r := newRunner(t, 4)
	nodes := []hw.Node{fakeNode("ok", "127.0.66.50"), fakeNode("boom", "127.0.66.51")}
	errs := r.Each(context.Background(), nodes, func(_ context.Context, i int, _ platform.Device) error {
		if i == 1 {
			panic("adapter bug")
		}
		return nil
	})
	if errs[0] != nil || !errors.Is(errs[1], ErrPanic) || !strings.Contains(errs[1].Error(), "adapter bug") {
		t.Fatalf("errors %v", errs)
	}
	// The slot and the gate of the panicking node were given back.
	if err := r.One(context.Background(), nodes[1], func(context.Context, int, platform.Device) error { return nil }); err != nil {
		t.Fatalf("after the panic: %v", err)
	}
	if r.gates.size() != 0 || len(r.slots) != 0 {
		t.Fatalf("%d gates, %d slots held", r.gates.size(), len(r.slots))
	}
}
