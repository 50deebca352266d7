package rmsserver

import (
	"context"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
)

// simRack is a simulated GB200 rack behind a server whose node registry
// already holds its nodes, as `rmsd --simulate` starts, with a real job
// engine.
type simRack struct {
	fleet  *sim.Fleet
	client rmspb.RackManagerClient
	conn   *grpc.ClientConn // the client's connection, for the other services
	racks  *racks.Registry
	runner *nodeops.Runner
	engine *actors.Engine
	nodes  []hw.Node // in fleet order: compute, switches, shelves
}

// startSimRack starts one simulated rack (time scaled down 1000×) and a
// server wired to it.
func startSimRack(t *testing.T) *simRack {
	t.Helper()
	return startSimRackWith(t, sim.Options{TimeScale: 0.001})
}

// startSimRackWith starts one simulated rack with opts.
func startSimRackWith(t *testing.T, opts sim.Options) *simRack {
	t.Helper()
	return startSimRackDeps(t, opts, nil)
}

// startSimRackDeps is startSimRackWith whose server dependencies tune
// changes before the server starts (nil: none).
func startSimRackDeps(t *testing.T, opts sim.Options, tune func(*Deps)) *simRack {
	t.Helper()
	return startSimRackFleetDeps(t, opts, func(_ *sim.Fleet, d *Deps) {
		if tune != nil {
			tune(d)
		}
	})
}

// startSimRackFleetDeps is startSimRackDeps whose tune also sees the
// started fleet (its ports).
func startSimRackFleetDeps(t *testing.T, opts sim.Options, tune func(*sim.Fleet, *Deps)) *simRack {
	t.Helper()
	s, deps := newSimRack(t, opts)
	if tune != nil {
		tune(s.fleet, &deps)
	}
	s.conn = startTestServer(t, deps)
	s.client = rmspb.NewRackManagerClient(s.conn)
	return s
}

// newSimRack starts one simulated rack, its node registry and a real job
// engine, and returns the server dependencies wired to them; the caller
// starts the server.
func newSimRack(t *testing.T, opts sim.Options) (*simRack, Deps) {
	t.Helper()
	fleet, err := sim.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleet.Close)
	pool := redfish.NewPool(redfish.Options{})
	t.Cleanup(pool.Close)
	// As `rmsd --simulate`: host endpoints on port 0 or 22 reach the
	// simulated NVOS hosts.
	nv, err := nvue.NewPool(nvue.Options{Port: fleet.NVUEPort()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	runner := nodeops.New(platform.Deps{Redfish: pool, NVUE: nv, Logger: zerolog.Nop()}, 64)
	reg := racks.New(nil)
	s := &simRack{fleet: fleet, racks: reg, runner: runner}
	for _, sn := range fleet.Nodes() {
		bmc := sn.BMC
		n := hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc}
		if sn.Host.Host() != "" {
			host := sn.Host
			n.Host = &host
		}
		s.nodes = append(s.nodes, n)
	}
	for _, err := range reg.Create(s.nodes) {
		if err != nil {
			t.Fatal(err)
		}
	}
	s.engine = newTestEngine(t) // closed before the fleet, after the server
	return s, Deps{Racks: reg, Nodes: runner, Jobs: s.engine}
}

// ofKind returns the rack's nodes of one kind.
func (s *simRack) ofKind(k hw.Kind) []hw.Node {
	var out []hw.Node
	for _, n := range s.nodes {
		if n.Type.Kind() == k {
			out = append(out, n)
		}
	}
	return out
}

// device returns the simulated BMC of a node.
func (s *simRack) device(t *testing.T, id string) *sim.Device {
	t.Helper()
	d, ok := s.fleet.Device(id)
	if !ok {
		t.Fatalf("no simulated device %s", id)
	}
	return d
}

// nodeSet converts nodes as a caller would send them.
func nodeSet(nodes ...hw.Node) *rmspb.NodeSet {
	set := &rmspb.NodeSet{}
	for _, n := range nodes {
		set.Nodes = append(set.Nodes, NodeInfoToProto(n))
	}
	return set
}
