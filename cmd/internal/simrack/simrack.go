// Package simrack starts the built-in rack simulator from the [simulator]
// configuration and publishes its inventory, for `rmsd --simulate` and
// `rmssim`.
package simrack

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/config"
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
		NMXPort:   cfg.NMXPort,
		GNMIPort:  cfg.GNMIPort,
		// Every compute tray's host OS answers SSH with the Mellanox
		// tools, so in-band NIC firmware (CX7, CX8, BF3_NIC) runs too.
		ComputeHosts: true,
		Logger:       log,
	})
	if err != nil {
		return nil, fmt.Errorf("start rack simulator: %w", err)
	}
	return fleet, nil
}

// Nodes returns the simulated nodes as a caller registers them: id, rack,
// type, BMC endpoint and the host endpoint (a switch's NVOS, a compute
// tray's host OS over SSH), with the credentials the devices accept.
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
