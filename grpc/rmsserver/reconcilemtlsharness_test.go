package rmsserver

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/nmxc"
	"github.com/rmsd/rmsd/hw/nodeops"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/platform"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/switchcert"
)

// siteDomain is the switch domain of the mTLS site: the directory under
// switch_cert_root and client_tls_root, and default_switch_domain.
const siteDomain = "site"

// mtlsFabricRack is one simulated rack of an mTLS site (factory switches)
// reached by two rmsd instances, both wired as `rmsd` builds its fabric
// clients (Deps.Fabric, fabric.New):
//
//   - secure: [switches] switch_cert_root and client_tls_root set, so
//     NVUE is verified against the site CA (with the bootstrap fallback)
//     and NMX-C is reached over mTLS with the outbound identity loaded
//     from <client_tls_root>/<domain>/ as rmsd loads it;
//   - insecure: insecure_switch, so NVUE is unverified and NMX-C plaintext.
//
// The secure one provisions the switches (ConfigureSwitchCertificate);
// either reconciles the fabric. Every log of both is captured.
type mtlsFabricRack struct {
	admin    *adminRack
	site     *mtlsSite
	secure   *reconcileRack
	insecure *reconcileRack
	// outbound is rmsd's NMX-C client identity, read from client_tls_root.
	outbound *tls.Config
	nmxPort  int
}

func startMTLSFabricRack(t *testing.T) *mtlsFabricRack {
	t.Helper()
	site := newMTLSSite(t)
	clientRoot := t.TempDir()
	site.writeClientIdentity(t, clientRoot, siteDomain)
	cert, roots := loadClientIdentity(t, clientRoot, siteDomain)
	outbound := &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots, MinVersion: tls.VersionTLS12}
	m := &mtlsFabricRack{site: site, outbound: outbound}
	var wiring adminWiring
	m.admin = startAdminRackConf(t, fastAdminTiming, adminRackConf{
		fleet: func(o *sim.Options) { o.FactorySwitchCertificates = true },
		nvue: func(o *nvue.Options) {
			o.TLS, o.RootCAs, o.ClientCertificate, o.BootstrapFallback = nvue.TLSVerify, roots, &cert, true
		},
		deps: func(w adminWiring, d *Deps) {
			wiring = w
			site.writeSwitchMaterial(t, siteDomain, w.fleet)
			m.nmxPort = w.fleet.NMXPort()
			d.Fabric = &fabric.Options{NVUE: w.nvue, SSH: w.ssh, NMXC: reconcileNMXC(m.nmxPort, outbound), Timing: fabricTestTiming}
			d.SwitchCert = SwitchCertConfig{CertRoot: site.root, DefaultDomain: siteDomain,
				Pacing: switchcert.Deps{CLIPause: time.Millisecond, HelloRetry: 5 * time.Millisecond, ManagerSettle: time.Millisecond}}
		},
	})
	a := m.admin
	m.secure = &reconcileRack{simRack: a.simRack, v2: rmspbv2.NewRackManagerV2Client(a.conn), logs: a.logs}

	// The insecure_switch rmsd: its own NVUE pool and node runner, the
	// same job engine.
	logger := zerolog.New(a.logs).Level(zerolog.DebugLevel)
	pool := redfish.NewPool(redfish.Options{RequestTimeout: 10 * time.Second})
	t.Cleanup(pool.Close)
	nv, err := nvue.NewPool(nvue.Options{TLS: nvue.TLSInsecure, Port: a.fleet.NVUEPort(), PollInterval: 2 * time.Millisecond,
		WaitTimeout: 10 * time.Second, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nv.Close)
	runner := nodeops.New(platform.Deps{Redfish: pool, NVUE: nv, SSH: wiring.ssh, Logger: logger}, 64)
	deps := Deps{Nodes: runner, Jobs: a.engine, SwitchCert: SwitchCertConfig{Insecure: true},
		Fabric: &fabric.Options{NVUE: nv, SSH: wiring.ssh, NMXC: reconcileNMXC(m.nmxPort, nil), Timing: fabricTestTiming}}
	ts := startServer(t, Options{Logger: logger, Deps: deps})
	conn := dial(t, ts.addr, nil)
	m.insecure = &reconcileRack{simRack: &simRack{fleet: a.fleet, client: rmspb.NewRackManagerClient(conn), conn: conn,
		runner: runner, engine: a.engine, nodes: a.nodes}, v2: rmspbv2.NewRackManagerV2Client(conn), logs: a.logs}
	return m
}

// reconcileNMXC is the NMX-C client policy of the reconcile tests: over
// tlsCfg (nil: plaintext), deadlines for a loaded machine.
func reconcileNMXC(port int, tlsCfg *tls.Config) nmxc.Options {
	return nmxc.Options{Port: port, TLS: tlsCfg, HelloAttempts: 5, HelloRetry: 10 * time.Millisecond,
		ConnectTimeout: 5 * time.Second, RequestTimeout: 10 * time.Second}
}

// writeClientIdentity writes rmsd's outbound identity, a client
// certificate of the site CA and the CA, to <root>/<domain>/ as
// client_tls_root holds it.
func (s *mtlsSite) writeClientIdentity(t *testing.T, root, domain string) {
	t.Helper()
	certPEM, keyPEM := s.issue(t, 4, nil, []string{"rmsd"})
	dir := filepath.Join(root, domain)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.ca.Raw})
	for name, data := range map[string][]byte{"ca.pem": caPEM, "client.pem": certPEM, "client.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// loadClientIdentity reads <root>/<domain>/{client.pem,client.key,ca.pem}
// as rmsd reads client_tls_root.
func loadClientIdentity(t *testing.T, root, domain string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	dir := filepath.Join(root, domain)
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("client_tls_root ca.pem holds no certificate")
	}
	return cert, roots
}

// hello greets n's NMX-C once with tlsCfg (nil: plaintext).
func (m *mtlsFabricRack) hello(t *testing.T, n hw.Node, tlsCfg *tls.Config) error {
	t.Helper()
	opts := reconcileNMXC(m.nmxPort, tlsCfg)
	opts.HelloAttempts = 1
	c, err := nmxc.New(*n.Host, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_, err = c.Hello(rpcContext(t))
	return err
}

// withoutIdentity is TLS that verifies the switch but presents no client
// certificate.
func (m *mtlsFabricRack) withoutIdentity() *tls.Config {
	return &tls.Config{RootCAs: m.outbound.RootCAs, MinVersion: tls.VersionTLS12}
}

// bindManager binds n's scale-up-fabric-manager (NMX-C) to mTLS with
// ConfigureSwitchCertificate on the secure rmsd and returns the
// binding the simulator then reports.
func (m *mtlsFabricRack) bindManager(t *testing.T, n hw.Node) nmxBinding {
	t.Helper()
	resp, err := m.admin.client.ConfigureSwitchCertificate(rpcContext(t), &rmspb.ConfigureSwitchCertificateRequest{
		Nodes: nodeSet(n), Services: []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_MANAGER},
		TestHello: true})
	if err != nil || len(resp.GetJobs()) != 1 {
		t.Fatalf("ConfigureSwitchCertificate: %v, %v", resp, err)
	}
	states := m.admin.waitJobs(t, resp.GetResponse().GetJobId())
	c := childOf(t, states, n.ID)
	res := parseCertResult(t, c.GetResultJson())
	if c.GetExecutionState() != completed {
		t.Fatalf("%s: %v", n.ID, c)
	}
	b := m.binding(n)
	if b != (nmxBinding{"mtls", res.CertID, res.CAID}) {
		t.Fatalf("%s: NMX-C bound %+v, the job says %q/%q", n.ID, b, res.CertID, res.CAID)
	}
	m.admin.assertNeverShown(t, "PRIVATE KEY", states...)
	return b
}

// nmxBinding is a switch's NMX-C mTLS binding as the simulator holds it.
type nmxBinding struct {
	Encryption, Certificate, CA string
}

// binding reads n's NMX-C binding from the simulator.
func (m *mtlsFabricRack) binding(n hw.Node) nmxBinding {
	var b nmxBinding
	b.Encryption, b.Certificate, b.CA = m.secure.host(n.ID).NMXMTLS()
	return b
}

// node is the rack's switch with the node id.
func (m *mtlsFabricRack) node(t *testing.T, id string) hw.Node {
	t.Helper()
	for _, n := range m.secure.switches() {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("no switch %s", id)
	return hw.Node{}
}
