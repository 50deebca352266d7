package main

import (
	"context"
	"fmt"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/cmd/internal/simrack"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/hw/sim"
)

// startSimulation starts the simulated racks, registers their nodes as
// CreateNodes would and points [switches] nvue_port and ssh_port at the
// simulated NVOS hosts, so switches given with host port 0 or 22 (as
// callers send them) reach them over NVUE and SSH. It returns the nodes for the nodes file, which the caller
// writes once its own listener is bound.
func startSimulation(cfg *config.Config, registry *racks.Registry, log logging.Logger) (*sim.Fleet, []hw.Node, error) {
	fleet, err := simrack.Start(context.Background(), cfg.Simulator, log.Component("simulator"))
	if err != nil {
		return nil, nil, err
	}
	if port := fleet.NVUEPort(); port != 0 {
		cfg.Switches.NVUEPort = port
	}
	if port := fleet.SSHPort(); port != 0 {
		cfg.Switches.SSHPort = port
	}
	if port := fleet.NMXPort(); port != 0 {
		cfg.Switches.NMXPort = port
	}
	if port := fleet.GNMIPort(); port != 0 {
		cfg.Switches.GNMIPort = port
	}
	nodes := simrack.Nodes(fleet)
	for i, err := range registry.Create(nodes) {
		if err != nil {
			fleet.Close()
			return nil, nil, fmt.Errorf("register simulated node %s: %w", nodes[i].ID, err)
		}
	}
	return fleet, nodes, nil
}

// publishSimulation writes the simulated nodes to [simulator] nodes_file
// and the simulated firmware release's AddFirmwareObject request to
// release_file.
func publishSimulation(cfg config.Simulator, nodes []hw.Node, rel *simrack.Release, log logging.Logger) error {
	if err := simrack.WriteNodesFile(cfg.NodesFile, nodes); err != nil {
		return err
	}
	releaseFile := simrack.ReleaseFile(cfg.ReleaseFile, cfg.NodesFile)
	if err := simrack.WriteReleaseFile(releaseFile, rel.Release); err != nil {
		return err
	}
	log.Info().Int("racks", cfg.Racks).Int("nodes", len(nodes)).
		Str("nodes_file", cfg.NodesFile).Str("release_file", releaseFile).Str("release", rel.Release.ID).
		Msg("simulated racks registered")
	return nil
}
