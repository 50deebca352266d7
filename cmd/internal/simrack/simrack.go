// Package simrack starts the built-in rack simulator from the [simulator]
// configuration and publishes its inventory, for `rmsd --simulate` and
// `rmssim`.
package simrack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmsserver"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/sim"
)

// Start starts cfg.Racks simulated racks.
func Start(ctx context.Context, cfg config.Simulator, log zerolog.Logger) (*sim.Fleet, error) {
	fleet, err := sim.Start(ctx, sim.Options{
		Racks:     cfg.Racks,
		TimeScale: cfg.TimeScale,
		Network:   cfg.Network,
		Port:      cfg.BMCPort,
		NVUEPort:  cfg.NVUEPort,
		SSHPort:   cfg.SSHPort,
		Logger:    log,
	})
	if err != nil {
		return nil, fmt.Errorf("start rack simulator: %w", err)
	}
	return fleet, nil
}

// Nodes returns the simulated nodes as a caller registers them: id, rack,
// type, BMC endpoint and, for switches, the NVOS host endpoint, with the
// credentials the devices accept.
func Nodes(f *sim.Fleet) []hw.Node {
	simNodes := f.Nodes()
	out := make([]hw.Node, 0, len(simNodes))
	for _, sn := range simNodes {
		bmc := sn.BMC
		n := hw.Node{ID: sn.ID, RackID: sn.RackID, Type: sn.Type, BMC: &bmc}
		if sn.Host.Host() != "" {
			host := sn.Host
			n.Host = &host
		}
		out = append(out, n)
	}
	return out
}

// WriteNodesFile writes nodes as a rack_manager.NodeSet in protobuf JSON
// (proto field names), so that `grpcurl -d @ ... < file` can send it as the
// `nodes` of a request. The file holds the simulator's credentials and is
// written 0600, replacing any previous file atomically.
func WriteNodesFile(path string, nodes []hw.Node) error {
	set := &rmspb.NodeSet{}
	for _, n := range nodes {
		set.Nodes = append(set.Nodes, rmsserver.NodeInfoToProto(n))
	}
	data, err := protojson.MarshalOptions{Multiline: true, UseProtoNames: true}.Marshal(set)
	if err != nil {
		return fmt.Errorf("encode simulated nodes: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".simulated-nodes-*")
	if err != nil {
		return fmt.Errorf("write simulated nodes file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write simulated nodes file %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write simulated nodes file %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write simulated nodes file %s: %w", path, err)
	}
	return nil
}
