package rmsserver

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/firmware/catalog"
	"github.com/rmsd/rmsd/hw/firmware/download"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
	"github.com/rmsd/rmsd/store"
	"github.com/rmsd/rmsd/store/sqlstore"
	"github.com/rmsd/rmsd/store/storetest"
)

// stallWait bounds each call made while the store is stalled: far above
// the store's timeout (1 s here), so only a call that waits for the store
// beyond its deadline reaches it.
const stallWait = 20 * time.Second

// stalledStoreServer is a server whose catalog and node registry write to
// PostgreSQL through a proxy the test stalls, the store bounded by a 1 s
// timeout; the registry's observer writes each node as rmsd's does (its
// rack, then its record), its next write held by gate when the test sets one.
type stalledStoreServer struct {
	client rmspb.RackManagerClient
	reg    *racks.Registry
	st     store.Store
	proxy  *storetest.CutProxy
	rel    simrelease.Release
	// writes counts the node writes the observer was asked for.
	writes atomic.Int32
	// gate, when set, is told of the next node write and holds it until
	// release is closed.
	gate atomic.Pointer[nodeGate]
}

type nodeGate struct {
	entered chan hw.Ref
	release chan struct{}
}

func startStalledStoreServer(t *testing.T) *stalledStoreServer {
	t.Helper()
	proxy, via := storetest.ProxyPostgres(t, storetest.TempPostgresDatabase(t))
	s := &stalledStoreServer{proxy: proxy, reg: racks.New(nil)}
	ctx, cancel := context.WithTimeout(context.Background(), catalogWait)
	defer cancel()
	st, err := sqlstore.OpenPostgres(ctx, via, 4, sqlstore.Options{ReadTimeout: time.Second, WriteTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s.st = st
	t.Cleanup(func() { _ = st.Close() })
	art, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(art.Close)
	if s.rel, err = simrelease.Publish(art, simrelease.Options{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dl := download.New(download.Options{SourceRoot: dir, Logger: zerolog.Nop()})
	t.Cleanup(dl.Close)
	svc, err := catalog.Open(ctx, catalog.Options{Store: st, Downloader: dl, Dir: dir, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(svc.Close)
	s.reg.Observe(s.observe)
	e := newTestEngine(t)
	ts := startServer(t, Options{Deps: Deps{Version: "stall-test", Catalog: svc, Racks: s.reg, Jobs: e}, Logger: zerolog.Nop()})
	s.client = rmspb.NewRackManagerClient(dial(t, ts.addr, nil))
	// First at cleanup: a call still waiting for the store ends before the
	// server stops.
	t.Cleanup(s.proxy.Restore)
	return s
}

// observe writes one node change to the store, with no deadline of its
// own: the store's bounds it.
func (s *stalledStoreServer) observe(ref hw.Ref, n *hw.Node) error {
	s.writes.Add(1)
	if g := s.gate.Swap(nil); g != nil {
		g.entered <- ref
		<-g.release
	}
	ctx := context.Background()
	if n == nil {
		return s.st.DeleteNode(ctx, ref.RackID, ref.NodeID)
	}
	if err := s.st.PutRack(ctx, store.RackRecord{RackID: ref.RackID, Family: string(n.Type.Family())}); err != nil {
		return err
	}
	_, err := s.st.PutNode(ctx, store.NodeRecord{RackID: ref.RackID, NodeID: ref.NodeID, KeyID: "k1", Sealed: []byte("sealed")})
	return err
}

// stallContext is the caller's deadline of a call made while the store is
// stalled.
func stallContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), stallWait)
	t.Cleanup(cancel)
	return ctx
}

// wantStoreUnavailable checks that err is UNAVAILABLE saying the store is
// unavailable and to retry.
func wantStoreUnavailable(t *testing.T, what string, err error) {
	t.Helper()
	st := status.Convert(err)
	msg := strings.ToLower(st.Message())
	if st.Code() != codes.Unavailable || !strings.Contains(msg, "store unavailable") || !strings.Contains(msg, "retry") {
		t.Errorf("%s with the store stalled: %v %q, want UNAVAILABLE saying the store is unavailable and to retry", what, st.Code(), st.Message())
	}
}

// TestAStalledStoreAnswersWritesUnavailableAndReadsFromMemory stalls the
// store (a proxy in front of PostgreSQL that stops forwarding): node and
// catalog writes answer UNAVAILABLE within the store's deadline, a
// CreateNodes batch stops at its first node the store did not take,
// nothing they asked for is registered or stored, and the registry's
// reads (ListRacks, ListNodeInventory) answer while a node write waits
// for the store.
func TestAStalledStoreAnswersWritesUnavailableAndReadsFromMemory(t *testing.T) {
	s := startStalledStoreServer(t)
	ctx := rpcContext(t)
	if _, err := s.client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		typedNode("rack-s", "compute-1", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
	}}}); err != nil {
		t.Fatal(err)
	}

	s.proxy.Stall()
	// A batch of three: the first node waits for the store and fails, the
	// others fail at once with it.
	s.writes.Store(0)
	_, err := s.client.CreateNodes(stallContext(t), &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		typedNode("rack-s", "compute-2", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
		typedNode("rack-s", "compute-3", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
		typedNode("rack-t", "compute-1", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
	}}})
	wantStoreUnavailable(t, "CreateNodes", err)
	if msg := status.Convert(err).Message(); !strings.Contains(msg, "0 added, 3 not registered") {
		t.Errorf("CreateNodes message %q does not say that none of the 3 nodes was registered", msg)
	}
	if n := s.writes.Load(); n != 1 {
		t.Errorf("the batch asked the store for %d node writes, want 1 (the rest fail with the first)", n)
	}
	_, err = s.client.UpdateNode(stallContext(t), &rmspb.UpdateNodeRequest{RackId: "rack-s", NodeId: "compute-1",
		UpdateInfo: &rmspb.NodeUpdateInfo{BmcEndpoint: userPassEndpoint("10.250.0.1", "root", "new-pw")}})
	wantStoreUnavailable(t, "UpdateNode", err)
	_, err = s.client.DeleteNode(stallContext(t), &rmspb.DeleteNodeRequest{RackId: "rack-s", NodeId: "compute-1"})
	wantStoreUnavailable(t, "DeleteNode", err)
	_, err = s.client.AddFirmwareObject(stallContext(t), &rmspb.AddFirmwareObjectRequest{ConfigJson: s.rel.ConfigJSON, HardwareType: "gb200-nvl"})
	wantStoreUnavailable(t, "AddFirmwareObject", err)

	// A node write held in the store: the registry's reads answer meanwhile.
	g := &nodeGate{entered: make(chan hw.Ref, 1), release: make(chan struct{})}
	s.gate.Store(g)
	releaseGate := sync.OnceFunc(func() { close(g.release) })
	t.Cleanup(releaseGate) // a failed test must not leave the write held
	created := make(chan error, 1)
	go func() {
		_, err := s.client.CreateNodes(stallContext(t), &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
			typedNode("rack-s", "compute-4", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
		}}})
		created <- err
	}()
	select {
	case <-g.entered:
	case <-time.After(stallWait):
		t.Fatal("the node write did not start")
	}
	racksResp, err := s.client.ListRacks(stallContext(t), &rmspb.ListRacksRequest{})
	if err != nil || strings.Join(racksResp.GetRackIds(), ",") != "rack-s" {
		t.Errorf("ListRacks during a node write to a stalled store = %v, %v; want rack-s", racksResp.GetRackIds(), err)
	}
	inv, err := s.client.ListNodeInventory(stallContext(t), &rmspb.ListNodeInventoryRequest{})
	if err != nil || len(inv.GetNodes()) != 1 || inv.GetNodes()[0].GetNodeId() != "compute-1" {
		t.Errorf("ListNodeInventory during a node write to a stalled store = %v, %v; want compute-1 only", inv.GetNodes(), err)
	}
	releaseGate()
	wantStoreUnavailable(t, "CreateNodes held in the store", <-created)

	s.proxy.Restore()
	inv, err = s.client.ListNodeInventory(ctx, &rmspb.ListNodeInventoryRequest{})
	if err != nil || len(inv.GetNodes()) != 1 || inv.GetNodes()[0].GetIpAddress() == "10.250.0.1" {
		t.Errorf("registry after the stall = %v, %v; want compute-1 only, as it was", inv.GetNodes(), err)
	}
	if racksResp, err := s.client.ListRacks(ctx, &rmspb.ListRacksRequest{}); err != nil || strings.Join(racksResp.GetRackIds(), ",") != "rack-s" {
		t.Errorf("racks after the stall = %v, %v; want rack-s only", racksResp.GetRackIds(), err)
	}
	if _, err := s.client.GetFirmwareObject(ctx, &rmspb.GetFirmwareObjectRequest{Id: s.rel.ID}); status.Code(err) != codes.NotFound {
		t.Errorf("GetFirmwareObject of the object added while stalled: %v, want NOT_FOUND", err)
	}
	if _, err := s.client.AddFirmwareObject(ctx, &rmspb.AddFirmwareObjectRequest{ConfigJson: s.rel.ConfigJSON, HardwareType: "gb200-nvl"}); err != nil {
		t.Errorf("AddFirmwareObject retried once the store answers: %v", err)
	}
	resp, err := s.client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		typedNode("rack-s", "compute-2", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
	}}})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Errorf("CreateNodes retried once the store answers = %v, %v", resp, err)
	}
}
