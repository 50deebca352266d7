package forward

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/hw/switchadmin"
	"github.com/rmsd/rmsd/member/rackpb"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
	"github.com/rmsd/rmsd/test/leakcheck"
	"github.com/rmsd/rmsd/test/syncbuf"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(leakcheck.ProtoactorThrottle); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// site is a simulated site of several racks, each with the job engine and
// handlers its owner would run (each engine in an actor system of its
// own), a shared PostgreSQL store, and receiving members: gRPC servers
// whose Interceptor forwards through a fake Cluster that hands each
// Forward, encoded and decoded as the wire would, to its rack's Serve.
type site struct {
	fleet    *sim.Fleet
	nodes    map[string][]hw.Node // switch nodes by rack
	compute  map[string]hw.Node   // a compute node of each rack
	racks    []string
	handlers map[string]*rmsserver.Handlers
	engines  map[string]*actors.Engine
	store    *sqlstore.Store
	cluster  *fakeCluster
	logs     *syncbuf.Buffer
}

// fakeCluster delivers Forwards to the racks' handlers in process.
type fakeCluster struct {
	site *site
	mu   sync.Mutex
	down map[string]bool
	seen []*rackpb.Forward
}

func (c *fakeCluster) Forward(ctx context.Context, fwd *rackpb.Forward) (*rackpb.ForwardReply, error) {
	wire, err := proto.Marshal(fwd)
	if err != nil {
		return nil, err
	}
	in := &rackpb.Forward{}
	if err := proto.Unmarshal(wire, in); err != nil {
		return nil, err
	}
	c.mu.Lock()
	down := c.down[in.GetRackId()]
	c.seen = append(c.seen, in)
	c.mu.Unlock()
	h, ok := c.site.handlers[in.GetRackId()]
	if down || !ok {
		return nil, errors.New("fake cluster: no member answers for rack " + in.GetRackId())
	}
	rep := Serve(ctx, h, in, zerolog.New(c.site.logs).With().Str("owner_of", in.GetRackId()).Logger())
	rep.Epoch = 1 // as the rack's grain does, under its lease
	wire, err = proto.Marshal(rep)
	if err != nil {
		return nil, err
	}
	out := &rackpb.ForwardReply{}
	return out, proto.Unmarshal(wire, out)
}

func (c *fakeCluster) setDown(rack string, down bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.down[rack] = down
}

// forwards returns the Forwards delivered so far.
func (c *fakeCluster) forwards() []*rackpb.Forward {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*rackpb.Forward(nil), c.seen...)
}

// siteStore is the shared store as the receiving side sees it: cluster
// parents in PostgreSQL, and each job's rack from the racks' engines,
// standing for the journal's job → rack records (store.RackOwners.JobRack)
// that the racks' engines write in a cluster.
type siteStore struct {
	*sqlstore.Store
	site *site
}

func (s siteStore) JobRack(ctx context.Context, id string) (string, error) {
	for _, rack := range s.site.racks {
		if _, err := s.site.engines[rack].Get(ctx, id, false); err == nil {
			return rack, nil
		} else if !errors.Is(err, messages.ErrJobNotFound) {
			return "", err
		}
	}
	return "", store.ErrNotFound
}

// countingStore counts the receiving side's reads of the shared store.
type countingStore struct {
	Store
	jobRacks, parents atomic.Int64
}

func (c *countingStore) JobRack(ctx context.Context, id string) (string, error) {
	c.jobRacks.Add(1)
	return c.Store.JobRack(ctx, id)
}

func (c *countingStore) ClusterParent(ctx context.Context, id string) (store.ClusterParent, error) {
	c.parents.Add(1)
	return c.Store.ClusterParent(ctx, id)
}

// reads is how many times the job → rack records and the cluster parents
// were read.
func (c *countingStore) reads() (jobRacks, parents int64) {
	return c.jobRacks.Load(), c.parents.Load()
}

// countingMember starts a receiving member whose store reads are counted.
func (s *site) countingMember(t testing.TB, id string) (rmspb.RackManagerClient, *countingStore) {
	t.Helper()
	st := &countingStore{Store: siteStore{s.store, s}}
	return s.memberOf(t, newReceiver(s.cluster, st, id, s.memberLog(id))), st
}

// fastAdminTiming polls every few milliseconds.
var fastAdminTiming = switchadmin.Timing{
	ResetPoll: 5 * time.Millisecond, ResetTimeout: 20 * time.Second,
	LoginRetry: 5 * time.Millisecond, LoginTimeout: 10 * time.Second,
	SDNActionTimeout: 10 * time.Second, SDNPoll: 2 * time.Millisecond, SDNTimeout: 10 * time.Second,
}

// startSite starts n simulated racks of two switches each.
func startSite(t testing.TB, n int) *site {
	t.Helper()
	logs := &syncbuf.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", logs.String())
		}
	})
	fleet, err := sim.Start(context.Background(), sim.Options{Racks: n, TimeScale: 0.001, Logger: zerolog.New(logs),
		Layout: sim.Layout{Compute: 1, Switches: 2, Shelves: 1, ComputeType: hw.ComputeGB200Nvidia,
			SwitchType: hw.SwitchGB200Nvidia, ShelfType: hw.PowerShelfGB200Liteon}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleet.Close)
	pg, err := sqlstore.OpenPostgres(context.Background(), storetest.TempPostgresDatabase(t), 4, sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	s := &site{fleet: fleet, nodes: map[string][]hw.Node{}, compute: map[string]hw.Node{}, handlers: map[string]*rmsserver.Handlers{},
		engines: map[string]*actors.Engine{}, store: pg, logs: logs}
	s.cluster = &fakeCluster{site: s, down: map[string]bool{}}
	for _, sn := range fleet.Nodes() {
		bmc, host := sn.BMC, sn.Host
		if sn.Type.Kind() == hw.KindCompute {
			s.compute[sn.RackID] = hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc}
		}
		if sn.Type.Kind() != hw.KindSwitch {
			continue
		}
		if _, ok := s.nodes[sn.RackID]; !ok {
			s.racks = append(s.racks, sn.RackID)
		}
		s.nodes[sn.RackID] = append(s.nodes[sn.RackID], hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc, Host: &host})
	}
	pool := redfish.NewPool(redfish.Options{RequestTimeout: 10 * time.Second})
	t.Cleanup(pool.Close)
	nv, err := nvue.NewPool(nvue.Options{Port: fleet.NVUEPort(), PollInterval: 2 * time.Millisecond, WaitTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	ssh := sshsftp.Options{Port: fleet.SSHPort(), HostKey: sshsftp.AcceptAnyHostKey(), ConnectTimeout: 5 * time.Second}
	runner := nodeops.New(platform.Deps{Redfish: pool, NVUE: nv, Logger: zerolog.Nop(), SSH: ssh}, 64)
	for _, rack := range s.racks {
		sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
			return slog.New(slog.NewTextHandler(io.Discard, nil))
		}))
		e, err := actors.New(sys, actors.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			e.Close()
			sys.Shutdown()
		})
		s.engines[rack] = e
		s.handlers[rack] = rmsserver.NewHandlers(rmsserver.Deps{Nodes: runner, Jobs: e, SwitchAdminTiming: fastAdminTiming},
			zerolog.New(logs).With().Str("owner_of", rack).Logger())
	}
	return s
}

// member starts a receiving member named id: a gRPC server with no job
// engine of its own whose Interceptor forwards through the site's
// cluster; it returns a client of it.
func (s *site) member(t testing.TB, id string) rmspb.RackManagerClient {
	t.Helper()
	return s.memberOf(t, newReceiver(s.cluster, siteStore{s.store, s}, id, s.memberLog(id)))
}

// memberLog is the log of the receiving member id.
func (s *site) memberLog(id string) zerolog.Logger {
	return zerolog.New(s.logs).With().Str("member", id).Logger()
}

// memberOf starts a receiving member whose receiving side is r (built by
// the test over a store of its own), and returns a client of it.
func (s *site) memberOf(t testing.TB, r *receiver) rmspb.RackManagerClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := rmsserver.New(rmsserver.Options{Logger: s.memberLog(r.self), Inner: []grpc.UnaryServerInterceptor{r.intercept}})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return rmspb.NewRackManagerClient(conn)
}

// nvos returns the simulated NVOS host of a switch node.
func (s *site) nvos(t *testing.T, n hw.Node) *sim.NVOSHost {
	t.Helper()
	for _, sn := range s.fleet.Nodes() {
		if sn.ID == n.ID && sn.RackID == n.RackID {
			if h, ok := sn.Switch.(*sim.NVOSHost); ok {
				return h
			}
		}
	}
	t.Fatalf("%s/%s has no simulated NVOS host", n.RackID, n.ID)
	return nil
}

// nodeSet converts nodes as a caller sends them.
func nodeSet(nodes ...hw.Node) *rmspb.NodeSet {
	set := &rmspb.NodeSet{}
	for _, n := range nodes {
		set.Nodes = append(set.Nodes, rmsserver.NodeInfoToProto(n))
	}
	return set
}

// rpcContext bounds one RPC in a test.
func rpcContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The shared store serves the receiving side as it is: each job's rack
// and the cluster parents.
var _ Store = (*sqlstore.Store)(nil)
