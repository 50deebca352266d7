package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
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

// simSwitchTLS is the switch TLS material of the embedded default, issued
// in memory at start and written to its directory once the daemon's
// listeners are bound.
type simSwitchTLS struct {
	dir, domain string
	material    simrack.SwitchTLSMaterial
	// identity is rmsd's own, nil when client_tls_root is configured.
	identity *switchIdentity
}

// simulatedSwitchTLS gives the embedded default every switch flow: with
// neither [switches] switch_cert_root nor insecure_switch configured, it
// issues the material of the default domain (default_switch_domain, else
// "simulated") from the simulator's CA and points switch_cert_root, and
// client_tls_root when unset, at a private directory beside the nodes
// file, so ConfigureSwitchCertificate installs it and rmsd still reaches
// the switches over mTLS afterwards. nil when the configuration has its
// own material.
func simulatedSwitchTLS(cfg *config.Config, fleet *sim.Fleet) (*simSwitchTLS, error) {
	s := &cfg.Switches
	if s.InsecureSwitch || s.SwitchCertRoot != "" {
		return nil, nil
	}
	m, err := simrack.IssueSwitchTLS(fleet)
	if err != nil {
		return nil, err
	}
	if s.DefaultSwitchDomain == "" {
		s.DefaultSwitchDomain = simrack.SwitchTLSDomain
	}
	out := &simSwitchTLS{dir: simrack.SwitchTLSDir(cfg.Simulator.NodesFile), domain: s.DefaultSwitchDomain, material: m}
	roots := simrack.SwitchTLSRoots(out.dir)
	s.SwitchCertRoot = roots.CertRoot
	if s.ClientTLSRoot == "" {
		cert, err := tls.X509KeyPair(m.Client.Cert, m.Client.Key)
		if err != nil {
			return nil, fmt.Errorf("simulated switch client identity: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(m.Client.CA) {
			return nil, errors.New("simulated switch CA: no PEM certificate")
		}
		out.identity = &switchIdentity{cert: cert, pool: pool}
		s.ClientTLSRoot = roots.ClientRoot
	}
	return out, nil
}

// publishSimulation writes the simulated nodes to [simulator] nodes_file,
// the simulated firmware release's AddFirmwareObject request to
// release_file and, when issued (swTLS non-nil), the switch TLS material.
func publishSimulation(cfg config.Simulator, nodes []hw.Node, rel *simrack.Release, swTLS *simSwitchTLS, log logging.Logger) error {
	if err := simrack.WriteNodesFile(cfg.NodesFile, nodes); err != nil {
		return err
	}
	if swTLS != nil {
		if err := simrack.WriteSwitchTLS(swTLS.dir, swTLS.domain, swTLS.material); err != nil {
			return err
		}
		log.Info().Str("dir", swTLS.dir).Str("domain", swTLS.domain).
			Msg("simulated switch TLS material issued from the simulator's CA (switch_cert_root, client_tls_root)")
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
