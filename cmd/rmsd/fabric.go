package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/fabricsync"
	"github.com/rmsd/rmsd/hw/nmxc"
)

// fabricSwitches builds the fabric client of one switch for the scale-up
// fabric reconcile: the shared NVUE pool, the switch SSH policy, NMX-C on
// [switches] nmx_gateway_id, in plaintext with insecure_switch (or without
// client_tls_root), else presenting <client_tls_root>/<domain>/client.pem
// and trusting its ca.pem. p paces the client's waits.
func (h *hardware) fabricSwitches(cfg *config.Config, p pace, log logging.Logger) func(hw.Node, string) (fabricsync.Switch, error) {
	ssh := sshOptions(cfg.Switches, cfg.Workflows)
	ssh.Logger = log.Component("ssh")
	timing := fabric.Timing{}
	if p < 1 {
		timing = timing.Scaled(float64(p))
	}
	s := cfg.Switches
	return func(n hw.Node, domain string) (fabricsync.Switch, error) {
		if n.Host == nil {
			return nil, fmt.Errorf("switch %s has no host endpoint", n.ID)
		}
		opts := fabric.Options{NVUE: h.nvue, SSH: ssh, NMXC: nmxc.Options{GatewayID: s.NMXGatewayID}, Timing: timing}
		if !s.InsecureSwitch && s.ClientTLSRoot != "" {
			tc, err := switchClientTLS(filepath.Join(s.ClientTLSRoot, domain))
			if err != nil {
				return nil, err
			}
			opts.NMXC.TLS = tc
		}
		return fabric.New(n.ID, *n.Host, opts)
	}
}

// switchClientTLS is the client identity and trusted CA of one switch
// domain: dir/{client.pem,client.key,ca.pem}.
func switchClientTLS(dir string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key"))
	if err != nil {
		return nil, fmt.Errorf("switch client identity in %s: %w", dir, err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, fmt.Errorf("switch CA in %s: %w", dir, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("switch CA %s: no PEM certificate", filepath.Join(dir, "ca.pem"))
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}
