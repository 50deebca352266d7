package rmsserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/gnmicap"
	"github.com/rmsd/rmsd/hw/nmxc"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/hw/switchcert"
)

// An mTLS site as upstream deploys one: a site CA; switch_cert_root holds
// the material installed on switches (the site CA and a certificate it
// issued naming every switch); client_tls_root holds rmsd's outbound
// identity (a client certificate of the same CA, the CA as ca.pem).
type mtlsSite struct {
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	pool   *x509.CertPool
	client tls.Certificate
	root   string // switch_cert_root
}

func newMTLSSite(t *testing.T) *mtlsSite {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "site CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	s := &mtlsSite{ca: ca, caKey: key, pool: x509.NewCertPool(), root: t.TempDir()}
	s.pool.AddCert(ca)
	certPEM, keyPEM := s.issue(t, 2, nil, []string{"rmsd"})
	if s.client, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		t.Fatal(err)
	}
	return s
}

// issue returns PEM certificate and key for the names, server and client
// use.
func (s *mtlsSite) issue(t *testing.T, serial int64, ips []net.IP, names []string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "site switches"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, IPAddresses: ips, DNSNames: names}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.ca, &key.PublicKey, s.caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
}

// writeSwitchMaterial writes switch_cert_root/<domain>/ for the fleet's
// switches.
func (s *mtlsSite) writeSwitchMaterial(t *testing.T, domain string, fleet *sim.Fleet) {
	t.Helper()
	var ips []net.IP
	var names []string
	for _, n := range fleet.Nodes() {
		if n.Host.IP != "" {
			ips = append(ips, net.ParseIP(n.Host.IP))
			names = append(names, n.ID)
			if n.Host.HostName != "" {
				names = append(names, n.Host.HostName)
			}
		}
	}
	certPEM, keyPEM := s.issue(t, 3, ips, names)
	dir := filepath.Join(s.root, domain)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"ca.pem": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.ca.Raw}),
		"client.pem": certPEM, "client.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// outbound is rmsd's outbound TLS towards NMX-C and gNMI: with the site
// identity (mTLS), or verifying the switch without presenting one.
func (s *mtlsSite) outbound(withIdentity bool) *tls.Config {
	cfg := &tls.Config{RootCAs: s.pool, MinVersion: tls.VersionTLS12}
	if withIdentity {
		cfg.Certificates = []tls.Certificate{s.client}
	}
	return cfg
}

// mtlsRack is an admin rack wired as rmsd with client_tls_root: factory
// switches (self-signed NVUE), NVUE verified against the site CA with the
// bootstrap fallback, NMX-C and gNMI over mTLS with the site identity.
type mtlsRack struct {
	*adminRack
	site   *mtlsSite
	nvue   *nvue.Pool
	fabric fabric.Options
}

func startMTLSRack(t *testing.T) *mtlsRack {
	t.Helper()
	site := newMTLSSite(t)
	m := &mtlsRack{site: site}
	m.adminRack = startAdminRackConf(t, fastAdminTiming, adminRackConf{
		fleet: func(o *sim.Options) { o.FactorySwitchCertificates = true },
		nvue: func(o *nvue.Options) {
			o.TLS, o.RootCAs, o.ClientCertificate, o.BootstrapFallback = nvue.TLSVerify, site.pool, &site.client, true
		},
		deps: func(w adminWiring, d *Deps) {
			site.writeSwitchMaterial(t, "site", w.fleet)
			m.nvue = w.nvue
			m.fabric = fabric.Options{NVUE: w.nvue, SSH: w.ssh,
				NMXC: nmxc.Options{Port: w.fleet.NMXPort(), TLS: site.outbound(true), HelloRetry: 5 * time.Millisecond,
					ConnectTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second},
				GNMI:   gnmicap.Options{Port: w.fleet.GNMIPort(), TLS: site.outbound(true), Timeout: 5 * time.Second},
				Timing: fabric.Timing{}.Scaled(0.0001)}
			d.Fabric = &m.fabric
			d.SwitchCert = SwitchCertConfig{CertRoot: site.root, DefaultDomain: "site",
				Pacing: switchcert.Deps{CLIPause: time.Millisecond, HelloRetry: 5 * time.Millisecond, ManagerSettle: time.Millisecond}}
		},
	})
	return m
}

// nmxHello greets n's NMX-C with tlsCfg (nil: plaintext).
func (m *mtlsRack) nmxHello(t *testing.T, n hw.Node, tlsCfg *tls.Config) error {
	t.Helper()
	opts := m.fabric.NMXC
	opts.TLS, opts.HelloAttempts = tlsCfg, 1
	c, err := nmxc.New(*n.Host, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	_, err = c.Hello(rpcContext(t))
	return err
}

// gnmiCapabilities calls n's gNMI Capabilities with tlsCfg.
func (m *mtlsRack) gnmiCapabilities(t *testing.T, n hw.Node, tlsCfg *tls.Config) error {
	t.Helper()
	opts := m.fabric.GNMI
	opts.TLS = tlsCfg
	_, err := gnmicap.Capabilities(rpcContext(t), *n.Host, opts)
	return err
}

var allSwitchServices = []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_NVUE_API,
	rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_MANAGER, rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY,
	rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_TELEMETRY_INTERFACE}

// From the factory to every service on mTLS and back: rmsd reaches the
// self-signed switches over the bootstrap fallback, installs the site
// material, binds NVUE, gNMI and both NMX apps, and says hello to NVUE,
// NMX-C and gNMI over its mTLS identity; the switches then refuse clients
// without one, NVUE verifies, and BatchDisableSwitchMtls unbinds it all.
func TestConfigureSwitchCertificate_FactorySwitchToMTLSOnEveryServiceAndBack(t *testing.T) {
	m := startMTLSRack(t)
	sw := m.ofKind(hw.KindSwitch)[:2]
	for _, n := range sw {
		m.nvos(t, n).EnableGNMI(true)
	}
	resp, err := m.client.ConfigureSwitchCertificate(rpcContext(t), &rmspb.ConfigureSwitchCertificateRequest{
		Nodes: nodeSet(sw...), Services: allSwitchServices, TestHello: true})
	if err != nil || len(resp.GetJobs()) != 2 {
		t.Fatalf("response = %v, %v", resp, err)
	}
	states := m.waitJobs(t, resp.GetResponse().GetJobId())
	for _, n := range sw {
		c := childOf(t, states, n.ID)
		res := parseCertResult(t, c.GetResultJson())
		if c.GetExecutionState() != completed || res.Status != "completed" || res.stageStatuses() != "prepare_remote_dir=completed "+
			"sftp_copy_ca_pem=completed sftp_copy_client_pem=completed sftp_copy_client_key=completed import_material=completed "+
			"bind_services=completed verify_services=completed test_hello=completed" {
			t.Fatalf("%s: %v", n.ID, c)
		}
		for _, want := range []string{`"nvue-api":"answered"`, `"scale-up-fabric-manager":"answered"`,
			`"scale-up-fabric-telemetry-interface":"answered (gNMI `, `"scale-up-fabric-telemetry":"no test hello"`} {
			if !strings.Contains(c.GetResultJson(), want) {
				t.Errorf("%s: no %s in %s", n.ID, want, c.GetResultJson())
			}
		}
		host := m.nvos(t, n)
		for _, app := range []string{"nmx-controller", "nmx-telemetry"} {
			if enc, crt, ca := host.AppMTLS(app); enc != "mtls" || crt != res.CertID || ca != res.CAID {
				t.Errorf("%s %s: encryption %q, bound to %q/%q", n.ID, app, enc, crt, ca)
			}
		}
		if crt, ca := host.TLSBinding("gnmi-server"); crt != res.CertID || ca != res.CAID {
			t.Errorf("%s gnmi-server bound to %q/%q", n.ID, crt, ca)
		}
		// The bound services demand rmsd's identity.
		if err := m.nmxHello(t, n, m.site.outbound(false)); err == nil || !strings.Contains(err.Error(), "requires mTLS") {
			t.Errorf("%s: NMX-C hello without a client certificate: %v", n.ID, err)
		}
		if err := m.gnmiCapabilities(t, n, m.site.outbound(false)); err == nil || !strings.Contains(err.Error(), "requires mTLS") {
			t.Errorf("%s: gNMI without a client certificate: %v", n.ID, err)
		}
		if err := m.nmxHello(t, n, m.site.outbound(true)); err != nil {
			t.Errorf("%s: NMX-C hello over mTLS: %v", n.ID, err)
		}
	}
	// Before the install every NVUE request went unverified, after it
	// none does.
	if m.nvue.BootstrapRequests() == 0 || !strings.Contains(m.logs.String(), "using unverified HTTPS for bootstrap") {
		t.Fatal("the factory switches were not reached over the bootstrap fallback")
	}
	before := m.nvue.BootstrapRequests()
	for _, n := range sw {
		c, err := m.nvue.Client(*n.Host)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.System(rpcContext(t)); err != nil {
			t.Fatalf("%s: NVUE after the install: %v", n.ID, err)
		}
	}
	if got := m.nvue.BootstrapRequests() - before; got != 0 {
		t.Fatalf("%d NVUE requests went unverified after the install", got)
	}

	off, err := m.client.BatchDisableSwitchMtls(rpcContext(t), &rmspb.BatchDisableSwitchMtlsRequest{
		Nodes: nodeSet(sw...), Services: allSwitchServices})
	if err != nil || off.GetResponse().GetStats().GetFailedNodes() != 0 {
		t.Fatalf("disable: %v, %v", off, err)
	}
	offStates := m.waitJobs(t, off.GetResponse().GetJobId())
	for _, n := range sw {
		c := childOf(t, offStates, n.ID)
		if c.GetExecutionState() != completed || !strings.Contains(c.GetResultJson(), `"scale-up-fabric-manager":"restored"`) {
			t.Fatalf("%s disable: %v", n.ID, c)
		}
		for _, app := range []string{"nmx-controller", "nmx-telemetry"} {
			if enc, _, _ := m.nvos(t, n).AppMTLS(app); enc != "none" {
				t.Errorf("%s %s encryption %q after disable", n.ID, app, enc)
			}
		}
		// The restored manager has no certificate any more: plaintext, as
		// rmsd with insecure_switch speaks to it.
		if err := m.nmxHello(t, n, nil); err != nil {
			t.Errorf("%s: NMX-C hello in plaintext after disable: %v", n.ID, err)
		}
		if err := m.gnmiCapabilities(t, n, m.site.outbound(false)); err != nil {
			t.Errorf("%s: gNMI without a client certificate after disable: %v", n.ID, err)
		}
	}
	m.assertNeverShown(t, "PRIVATE KEY", append(states, offStates...)...)
}

// One switch whose manager refuses the mTLS binding fails in
// bind_services, naming why; one whose encryption @update fails is bound
// through the nv CLI instead; the others complete.
func TestConfigureSwitchCertificate_NMXBindingFailuresPerSwitch(t *testing.T) {
	m := startMTLSRack(t)
	sw := m.ofKind(hw.KindSwitch)[:3]
	m.nvos(t, sw[1]).FailNextFabricStep(nvossim.StepMTLS, "manager certificate refused (simulated)")
	m.nvos(t, sw[2]).FailNextFabricStep(nvossim.StepEncryptionUpdate, "encryption update refused (simulated)")
	resp, err := m.client.ConfigureSwitchCertificate(rpcContext(t), &rmspb.ConfigureSwitchCertificateRequest{
		Nodes: nodeSet(sw...), Services: []rmspb.SwitchService{rmspb.SwitchService_SWITCH_SERVICE_SCALE_UP_FABRIC_MANAGER},
		TestHello: true})
	if err != nil || len(resp.GetJobs()) != 3 {
		t.Fatalf("response = %v, %v", resp, err)
	}
	states := m.waitJobs(t, resp.GetResponse().GetJobId())
	for _, n := range []hw.Node{sw[0], sw[2]} {
		c := childOf(t, states, n.ID)
		res := parseCertResult(t, c.GetResultJson())
		if c.GetExecutionState() != completed || !strings.Contains(c.GetResultJson(), `"scale-up-fabric-manager":"answered"`) {
			t.Errorf("%s: %v", n.ID, c)
		}
		if enc, crt, _ := m.nvos(t, n).AppMTLS("nmx-controller"); enc != "mtls" || crt != res.CertID {
			t.Errorf("%s: encryption %q, certificate %q", n.ID, enc, crt)
		}
	}
	if c := childOf(t, states, sw[2].ID); !strings.Contains(c.GetResultJson(), `"scale-up-fabric-manager":"bound (encryption set with the nv CLI)"`) {
		t.Errorf("the CLI fallback is not recorded: %s", c.GetResultJson())
	}
	bad := childOf(t, states, sw[1].ID)
	res := parseCertResult(t, bad.GetResultJson())
	if bad.GetExecutionState() != failed || !strings.Contains(bad.GetErrorMessage(), "manager certificate refused (simulated)") ||
		!strings.Contains(res.stageStatuses(), "bind_services=failed verify_services=skipped test_hello=skipped") {
		t.Errorf("refusing switch: %v", bad)
	}
	if enc, _, _ := m.nvos(t, sw[1]).AppMTLS("nmx-controller"); enc == "mtls" {
		t.Errorf("the refusing switch's manager is on mTLS")
	}
}
