package member

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/cluster"
	"google.golang.org/grpc/codes"

	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// handOverWait bounds every wait on a member of these tests: a one-second
// membership timeout settles in a few seconds; this is generous on a
// loaded machine.
const handOverWait = 60 * time.Second

// heldRack is a RackService whose one job runs until the test ends it.
// It reports the hand-over's steps on channels.
type heldRack struct {
	// jobEnded is closed when the rack's job has ended (InFlight 0).
	jobEnded <-chan struct{}
	// draining is closed at the first BeginDrain: the hand-over began.
	draining  chan struct{}
	drainOnce sync.Once
	// closed is closed when Close has returned.
	closed    chan struct{}
	closeOnce sync.Once
}

func newHeldRack(jobEnded <-chan struct{}) *heldRack {
	return &heldRack{jobEnded: jobEnded, draining: make(chan struct{}), closed: make(chan struct{})}
}

func (r *heldRack) Serve(context.Context, *rackpb.Forward) *rackpb.ForwardReply {
	return &rackpb.ForwardReply{Code: uint32(codes.OK)}
}

func (r *heldRack) InFlight() int {
	select {
	case <-r.jobEnded:
		return 0
	default:
		return 1
	}
}

func (r *heldRack) BeginDrain() { r.drainOnce.Do(func() { close(r.draining) }) }

func (r *heldRack) Close(context.Context) error {
	r.closeOnce.Do(func() { close(r.closed) })
	return nil
}

func (r *heldRack) Abandon(error) { r.closeOnce.Do(func() { close(r.closed) }) }

// oneRack opens a fresh PostgreSQL database with rackID registered.
func oneRack(t *testing.T, rackID string) *sqlstore.Store {
	t.Helper()
	st, err := sqlstore.OpenPostgres(t.Context(), storetest.TempPostgresDatabase(t), 4, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.PutRack(t.Context(), store.RackRecord{RackID: rackID, Family: "GB200"}); err != nil {
		t.Fatal(err)
	}
	return st
}

// memberAt is a member of the rack kind at port of loopback.
func memberAt(id string, port int) *cluster.Member {
	return &cluster.Member{Id: id, Host: "127.0.0.1", Port: int32(port), Kinds: []string{rackKind}}
}

// rackPlacedOn returns a rack id that members place on their last.
func rackPlacedOn(t *testing.T, members []*cluster.Member) string {
	t.Helper()
	last := members[len(members)-1].Address()
	for i := range 100 {
		r := fmt.Sprintf("rack-%d", i)
		if place(members, nil, cluster.NewClusterIdentity(r, rackKind)) == last {
			return r
		}
	}
	t.Fatal("no rack of 100 placed on the last member")
	return ""
}

// moveTopology gives m's placement members as the cluster's topology, as
// protoactor's topology event does, and tells m's activator.
func moveTopology(m *Member, members []*cluster.Member) {
	m.place.topology(members)
	m.sys.Root.Send(m.place.activator, &placementChanged{})
}

// aChange is a forwarded change of rackID's nodes.
func aChange(rackID string) *rackpb.Forward {
	return &rackpb.Forward{Method: "/rack_manager.RackManager/ExecuteColdReboot", RackId: rackID}
}

// untilServedBy forwards changes from m until member's service of
// rackID answers one (the others answer UNAVAILABLE while the rack changes
// hands).
func untilServedBy(t *testing.T, m *Member, rackID, member string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), handOverWait)
	defer cancel()
	poll := time.NewTicker(20 * time.Millisecond) // a bounded poll of the rack's owner
	defer poll.Stop()
	for {
		fctx, fcancel := context.WithTimeout(ctx, 5*time.Second)
		rep, err := m.Forward(fctx, aChange(rackID))
		fcancel()
		if err == nil && codes.Code(rep.GetCode()) == codes.OK && rep.GetMemberId() == member {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("rack %s not served by %s within %s: last %v, %v", rackID, member, handOverWait, rep, err)
		case <-poll.C:
		}
	}
}

// TestAChangeQueuedBehindAHandOverIsAnsweredAtOnce: the membership
// moves a rack to another member while a job of the rack still runs here,
// which gives the job the hand-over window. A change forwarded to the
// rack's grain meanwhile is answered UNAVAILABLE at once (the caller
// retries), not left in the grain's mailbox until the caller's deadline.
// Once the job ends, the service closes before the lease is released, and
// the grain's next activation serves the rack.
//
// One member per test process (one protoactor remote: a second one races
// on gRPC's global logger), so the member the rack moves to is only in
// the topology given to the placement, as protoactor's topology event
// would give it; and the test runs in a process of its own (inAlone),
// after no other test's gRPC client.
func TestAChangeQueuedBehindAHandOverIsAnsweredAtOnce(t *testing.T) {
	if !inAlone(t) {
		return
	}
	port, auto := freePort(t), freePort(t)
	self := memberAt("self", port)
	joined := []*cluster.Member{self, memberAt("joined", freePort(t))}
	rackID := rackPlacedOn(t, joined)
	st := oneRack(t, rackID)

	jobEnded := make(chan struct{})
	endJob := sync.OnceFunc(func() { close(jobEnded) })
	first := newHeldRack(jobEnded)
	// Every later opening checks that the first service closed before the
	// rack's lease was released.
	var opens []error
	var mu sync.Mutex
	open := func(_ context.Context, _ string, _ func() (store.RackLease, bool), previous string) (RackService, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(opens) == 0 {
			opens = append(opens, nil)
			return first, nil
		}
		select {
		case <-first.closed:
			opens = append(opens, nil)
		default:
			opens = append(opens, fmt.Errorf("rack opened again (previous owner %q) before the first service closed", previous))
		}
		ended := make(chan struct{})
		close(ended)
		return newHeldRack(ended), nil
	}
	m, err := Start(Config{
		MemberID: "m-a", AdvertisedHost: "127.0.0.1", Port: port, Seeds: []string{fmt.Sprintf("127.0.0.1:%d", auto)}, AutomanagedPort: auto,
		MembershipTimeout: time.Second, HandOverTimeout: 2 * handOverWait, Store: st, OpenRack: open,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// The job ends first: a member stopping hands the rack over.
		endJob()
		m.Stop()
	}()
	self.Id = m.sys.ID
	untilServedBy(t, m, rackID, "m-a")

	moveTopology(m, joined)
	select {
	case <-first.draining:
	case <-time.After(handOverWait):
		t.Fatalf("%s not handed over within %s of the topology placing it elsewhere", rackID, handOverWait)
	}
	// The hand-over waits for the job: a change reaches the grain now.
	deadline := 10 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	started := time.Now()
	rep, err := m.Forward(ctx, aChange(rackID))
	cancel()
	took := time.Since(started)
	select {
	case <-first.closed:
		t.Fatal("the rack's service closed while its job still ran")
	default:
	}
	if err != nil {
		t.Fatalf("a change during the hand-over: %v after %s, want an answer at once", err, took)
	}
	if got := codes.Code(rep.GetCode()); got != codes.Unavailable {
		t.Fatalf("a change during the hand-over: %s %q, want UNAVAILABLE (retry)", got, rep.GetMessage())
	}
	if took > deadline/2 {
		t.Errorf("a change during the hand-over answered after %s, want well before its %s deadline", took, deadline)
	}

	endJob()
	moveTopology(m, []*cluster.Member{self})
	untilServedBy(t, m, rackID, "m-a")
	mu.Lock()
	defer mu.Unlock()
	if len(opens) < 2 {
		t.Fatalf("rack opened %d times, want again after the hand-over", len(opens))
	}
	for _, err := range opens {
		if err != nil {
			t.Error(err)
		}
	}
}
