package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rmsd/rmsd/cmd/internal/logging"
	"github.com/rmsd/rmsd/cmd/internal/metrics"
	"github.com/rmsd/rmsd/config"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/fwupdate"
	"github.com/rmsd/rmsd/hw/gnmicap"
	"github.com/rmsd/rmsd/hw/nicflash"
	"github.com/rmsd/rmsd/hw/nmxc"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/hw/switchadmin"
	"github.com/rmsd/rmsd/hw/switchimage"
)

// hardware holds the southbound clients the daemon shares between RPCs and
// jobs: one Redfish pool and one NVUE pool, closed on shutdown, and the
// SSH policy switch firmware is staged with (connections per operation).
type hardware struct {
	pool   *redfish.Pool
	nvue   *nvue.Pool
	runner *nodeops.Runner
	// firmware is the timing of firmware jobs.
	firmware fwupdate.Timing
	// switchAdmin is the timing of switch password and reset jobs.
	switchAdmin switchadmin.Timing
	// switchImage is the timing of switch system image jobs.
	switchImage switchimage.Timing
	// fabric is how the scale-up fabric RPCs reach switches.
	fabric fabric.Options
	// nic flashes in-band NIC firmware over compute hosts, with the
	// switches' SSH policy (host key, SFTP timeouts) on each host
	// endpoint's own port.
	nic *nicflash.Flasher
}

// switchIdentity is rmsd's outbound switch identity and the CA that signs
// the switches.
type switchIdentity struct {
	cert tls.Certificate
	pool *x509.CertPool
}

// newHardware builds the southbound clients; p paces their device waits
// (see pace). A non-nil id is the switch identity to use instead of
// client_tls_root's files (the simulation's, issued in memory). m is told
// of every Redfish and NVUE request and of the switch identity's expiry;
// powerSeen, when set, of every power state the adapters read or set (the
// console's power view).
func newHardware(cfg *config.Config, p pace, log logging.Logger, id *switchIdentity, m *metrics.Metrics, powerSeen platform.PowerSeen) (*hardware, error) {
	r := cfg.Redfish
	nv, err := nvueOptions(cfg.Switches, id)
	if err != nil {
		return nil, err
	}
	if err := recordSwitchCertificates(m, cfg.Switches, nv, id); err != nil {
		return nil, err
	}
	nv.Logger = log.Component("nvue")
	nv.Observe = m.ObserveHardware
	nvPool, err := nvue.NewPool(nv)
	if err != nil {
		return nil, err
	}
	pool := redfish.NewPool(redfish.Options{
		ConnectTimeout:   seconds(r.ConnectTimeoutSeconds),
		RequestTimeout:   seconds(r.RequestTimeoutSeconds),
		UploadTimeout:    seconds(r.UploadTimeoutSeconds),
		TaskPollInterval: p.of(seconds(r.TaskPollIntervalSeconds)),
		TaskTimeout:      seconds(r.TaskTimeoutSeconds),
		LivenessInterval: p.liveness(),
		VerifyTLS:        r.VerifyCertificates,
		Observe:          m.ObserveHardware,
		Logger:           log.Component("redfish"),
	})
	ssh := sshOptions(cfg.Switches, cfg.Workflows)
	ssh.Logger = log.Component("ssh")
	deps := platform.Deps{Redfish: pool, NVUE: nvPool, SSH: ssh, SwitchReboot: p.switchReboot(), Logger: log.Component("platform"), PowerSeen: powerSeen,
		ONIE: hw.Credentials{Username: cfg.Switches.ONIEUsername, Password: hw.NewSecret(cfg.Switches.ONIEPassword)}}
	fab := fabricOptions(cfg.Switches, nv, p)
	fab.NVUE, fab.SSH = nvPool, ssh
	return &hardware{pool: pool, nvue: nvPool, runner: nodeops.New(deps, r.MaxConcurrentBMCRequests),
		firmware:    p.firmwareTiming(seconds(r.TaskPollIntervalSeconds), seconds(r.TaskTimeoutSeconds)),
		switchAdmin: p.switchAdmin(),
		switchImage: p.switchImageTiming(),
		fabric:      fab,
		nic:         &nicflash.Flasher{SSH: ssh, ReadyInterval: p.of(nicflash.DefaultReadyInterval)}}, nil
}

// fabricOptions builds the scale-up fabric policy (NVUE pool and SSH are
// the caller's): NMX-C and gNMI on [switches] nmx_port and gnmi_port with
// the configured gateway id and deadlines; plaintext with insecure_switch,
// else TLS: mTLS with NVUE's client identity (nv, loaded once) when
// client_tls_root is set (server checked against its ca.pem, named
// dns_domain when set), or unverified TLS like NVUE's when no identity is
// configured. p paces the device waits.
func fabricOptions(s config.Switches, nv nvue.Options, p pace) fabric.Options {
	var tlsCfg *tls.Config
	switch {
	case s.InsecureSwitch:
	case nv.ClientCertificate == nil:
		tlsCfg = &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // as NVUE without a client identity
	default:
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{*nv.ClientCertificate}, RootCAs: nv.RootCAs, ServerName: s.DNSDomain, MinVersion: tls.VersionTLS12}
	}
	request := seconds(s.NMXRequestTimeoutSeconds)
	return fabric.Options{
		NMXC: nmxc.Options{Port: s.NMXPort, GatewayID: s.NMXGatewayID, TLS: tlsCfg, ConnectTimeout: seconds(s.NMXConnectTimeoutSeconds),
			RequestTimeout: request, HelloRetry: p.of(nmxc.DefaultHelloRetry)},
		GNMI:   gnmicap.Options{Port: s.GNMIPort, TLS: tlsCfg, Timeout: request},
		Timing: fabric.Timing{}.Scaled(float64(p)),
	}
}

// Close drops the idle connections of both pools.
func (h *hardware) Close() {
	h.pool.Close()
	h.nvue.Close()
}

// nvueOptions builds the NVUE client policy: [switches] nvue_port for host
// endpoints on port 0 or 22; unverified HTTPS with [switches]
// insecure_switch or when no client identity is configured, else mTLS with
// <client_tls_root>/<default_switch_domain>/{client.pem,client.key,ca.pem},
// with upstream's unverified bootstrap for a switch whose certificate fails
// verification (a factory self-signed one; see nvue.IsCertificateError).
// A non-nil id replaces client_tls_root's files.
func nvueOptions(s config.Switches, id *switchIdentity) (nvue.Options, error) {
	if s.InsecureSwitch || (s.ClientTLSRoot == "" && id == nil) {
		return nvue.Options{TLS: nvue.TLSInsecure, Port: s.NVUEPort}, nil
	}
	if id == nil {
		cert, pool, err := switchClientIdentity(s)
		if err != nil {
			return nvue.Options{}, err
		}
		id = &switchIdentity{cert: cert, pool: pool}
	}
	return nvue.Options{TLS: nvue.TLSVerify, RootCAs: id.pool, ClientCertificate: &id.cert, BootstrapFallback: true, Port: s.NVUEPort}, nil
}

// switchClientIdentity loads rmsd's outbound switch identity:
// <client_tls_root>/<default_switch_domain>/{client.pem,client.key} and
// the CA that signs the switches, ca.pem.
func switchClientIdentity(s config.Switches) (tls.Certificate, *x509.CertPool, error) {
	dir := filepath.Join(s.ClientTLSRoot, s.DefaultSwitchDomain)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key"))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("switch client identity in %s: %w", dir, err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("switch CA in %s: %w", dir, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return tls.Certificate{}, nil, fmt.Errorf("switch CA %s: no PEM certificate", filepath.Join(dir, "ca.pem"))
	}
	return cert, pool, nil
}

// sshOptions builds the SSH/SFTP policy of switch hosts: [switches]
// ssh_port and host key policy (accept-any, upstream's, or the keys of
// ssh_known_hosts), [workflows] SFTP upload and step timeouts.
func sshOptions(s config.Switches, w config.Workflows) sshsftp.Options {
	hostKey := sshsftp.AcceptAnyHostKey()
	if s.SSHHostKeyPolicy == config.HostKeyKnownHosts {
		hostKey = sshsftp.KnownHostsFile(s.SSHKnownHosts)
	}
	return sshsftp.Options{Port: s.SSHPort, HostKey: hostKey,
		UploadTimeout: seconds(w.SFTPUploadTimeoutSeconds), StepTimeout: seconds(w.SFTPStepTimeoutSeconds)}
}
