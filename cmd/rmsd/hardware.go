package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
)

// hardware holds the southbound clients the daemon shares between RPCs.
type hardware struct {
	pool   *redfish.Pool
	runner *nodeops.Runner
	nvue   nvue.Options
}

func newHardware(cfg *config.Config, log logging.Logger) (*hardware, error) {
	r := cfg.Redfish
	pool := redfish.NewPool(redfish.Options{
		ConnectTimeout:   seconds(r.ConnectTimeoutSeconds),
		RequestTimeout:   seconds(r.RequestTimeoutSeconds),
		UploadTimeout:    seconds(r.UploadTimeoutSeconds),
		TaskPollInterval: seconds(r.TaskPollIntervalSeconds),
		TaskTimeout:      seconds(r.TaskTimeoutSeconds),
		VerifyTLS:        r.VerifyCertificates,
		Logger:           log.Component("redfish"),
	})
	nv, err := nvueOptions(cfg.Switches)
	if err != nil {
		pool.Close()
		return nil, err
	}
	nv.Logger = log.Component("nvue")
	deps := platform.Deps{Redfish: pool, NVUE: nv, Logger: log.Component("platform")}
	return &hardware{pool: pool, runner: nodeops.New(deps, r.MaxConcurrentBMCRequests), nvue: nv}, nil
}

func (h *hardware) Close() { h.pool.Close() }

// nvueOptions builds the NVUE client policy: unverified HTTPS with
// [switches] insecure_switch or when no client identity is configured, else
// mTLS with <client_tls_root>/<default_switch_domain>/{client.pem,client.key,ca.pem}.
func nvueOptions(s config.Switches) (nvue.Options, error) {
	if s.InsecureSwitch || s.ClientTLSRoot == "" {
		return nvue.Options{TLS: nvue.TLSInsecure}, nil
	}
	dir := filepath.Join(s.ClientTLSRoot, s.DefaultSwitchDomain)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key"))
	if err != nil {
		return nvue.Options{}, fmt.Errorf("switch client identity in %s: %w", dir, err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nvue.Options{}, fmt.Errorf("switch CA in %s: %w", dir, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nvue.Options{}, fmt.Errorf("switch CA %s: no PEM certificate", filepath.Join(dir, "ca.pem"))
	}
	return nvue.Options{TLS: nvue.TLSVerify, RootCAs: pool, ClientCertificate: &cert}, nil
}
