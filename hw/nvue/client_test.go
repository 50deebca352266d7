package nvue_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const fast = 0.001

type rig struct {
	sw  *nvossim.Switch
	nv  *nvue.Client
	ctx context.Context
}

func options() nvue.Options {
	return nvue.Options{PollInterval: 5 * time.Millisecond, WaitTimeout: 5 * time.Second, RequestTimeout: 5 * time.Second}
}

// start runs a simulated switch; before, if set, runs between New and Start.
func start(t *testing.T, cfg nvossim.Config, before func(*nvossim.Switch)) *rig {
	t.Helper()
	if cfg.TimeScale == 0 {
		cfg.TimeScale = fast
	}
	sw, err := nvossim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if before != nil {
		before(sw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	if err := sw.Start(ctx, "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sw.Close() })
	return &rig{sw: sw, nv: newClient(t, sw.Endpoint(), options()), ctx: ctx}
}

func newClient(t *testing.T, ep hw.Endpoint, opts nvue.Options) *nvue.Client {
	t.Helper()
	c, err := nvue.New(ep, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func (r *rig) as(t *testing.T, user, pw string) *nvue.Client {
	ep := r.sw.Endpoint()
	ep.Credentials = hw.UserPass(user, pw)
	return newClient(t, ep, options())
}

func TestReadsIdentityAndFirmware(t *testing.T) {
	r := start(t, nvossim.Config{HostName: "sw-r1-01", SerialNumber: "MT2233X00001", ChassisSerial: "1821324000123", SlotNumber: 12, TrayIndex: 3, TopologyID: 2}, nil)
	sys, err := r.nv.System(r.ctx)
	if err != nil || sys.Hostname != "sw-r1-01" {
		t.Fatalf("system = %+v, %v", sys, err)
	}
	p, err := r.nv.Platform(r.ctx)
	if err != nil || p.SerialNumber != "MT2233X00001" || p.ProductName == "" {
		t.Fatalf("platform = %+v, %v", p, err)
	}
	loc, err := r.nv.ChassisLocation(r.ctx)
	if err != nil || loc.ChassisSerial != "1821324000123" || show(loc.SlotNumber) != "12" || show(loc.TopologyID) != "2" ||
		show(loc.TrayIndex) != "3" {
		t.Fatalf("location = %+v, %v", loc, err)
	}
	fw, err := r.nv.Firmware(r.ctx)
	if err != nil || len(fw) != 5 {
		t.Fatalf("firmware = %+v, %v", fw, err)
	}
	names := [5]string{fw[0].Name, fw[1].Name, fw[2].Name, fw[3].Name, fw[4].Name}
	if names != [5]string{"BIOS", "BMC", "CPLD1", "EROT", "FPGA"} {
		t.Fatalf("component names = %v", names)
	}
	cpld, err := r.nv.FirmwareComponent(r.ctx, "cpld")
	if err != nil || cpld.Actual == "" {
		t.Fatalf("cpld alias = %+v, %v", cpld, err)
	}
	if _, err := r.nv.FirmwareComponent(r.ctx, "nosuch"); !errors.Is(err, nvue.ErrNotFound) {
		t.Fatalf("unknown component: %v", err)
	}
	im, err := r.nv.Image(r.ctx)
	if err != nil || im.Current != 1 || im.CurrentBuild() != "nvos-25.02.2553" {
		t.Fatalf("image = %+v, %v", im, err)
	}
}

func TestWrongCredentialsAreUnauthorized(t *testing.T) {
	r := start(t, nvossim.Config{Password: hw.NewSecret("Right-Pass-1")}, nil)
	_, err := r.as(t, "admin", "wrong").System(r.ctx)
	var he *nvue.HTTPError
	if !errors.Is(err, nvue.ErrUnauthorized) || errors.Is(err, nvue.ErrPasswordExpired) || !errors.As(err, &he) || he.Status != 401 {
		t.Fatalf("wrong password: %v", err)
	}
	r.sw.RejectLogins(true)
	if _, err := r.nv.System(r.ctx); !errors.Is(err, nvue.ErrUnauthorized) {
		t.Fatalf("reject logins: %v", err)
	}
	r.sw.RejectLogins(false)
	if _, err := r.nv.System(r.ctx); err != nil {
		t.Fatalf("after the fault: %v", err)
	}
}

func TestExpiredPasswordIsDistinguished(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	r.sw.ExpirePassword("admin")
	_, err := r.nv.System(r.ctx)
	if !errors.Is(err, nvue.ErrPasswordExpired) || !errors.Is(err, nvue.ErrUnauthorized) {
		t.Fatalf("expired password: %v", err)
	}
}

func TestUnreachableIsTransportErrorThenRecovers(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	r.sw.Unreachable(time.Hour)
	if _, err := r.nv.System(r.ctx); !errors.Is(err, nvue.ErrTransport) {
		t.Fatalf("during outage: %v", err)
	}
	if _, err := r.nv.Probe(r.ctx, "/nvue_v1/system"); !errors.Is(err, nvue.ErrTransport) {
		t.Fatalf("probe during outage: %v", err)
	}
	r.sw.Unreachable(0)
	if code, err := r.nv.Probe(r.ctx, "/nvue_v1/system"); err != nil || code != 200 {
		t.Fatalf("after outage: %d, %v", code, err)
	}
}

func TestRefusedConnectionIsTransportError(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	ep := r.sw.Endpoint()
	if err := r.sw.Close(); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, ep, options())
	if _, err := c.System(r.ctx); !errors.Is(err, nvue.ErrTransport) {
		t.Fatalf("closed switch: %v", err)
	}
}

func TestSlowAnswerTimesOut(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	r.sw.DelayResponses(time.Hour)
	opts := options()
	opts.RequestTimeout = 300 * time.Millisecond
	c := newClient(t, r.sw.Endpoint(), opts)
	// The switch never answers: only the request timeout can end the call.
	if _, err := c.System(r.ctx); !errors.Is(err, nvue.ErrTimeout) {
		t.Fatalf("slow answer: %v", err)
	}
}

func TestActionFailureCarriesIssue(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	r.sw.FailActions("flash write error at block 7")
	id, err := r.nv.UninstallImage(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.nv.WaitAction(r.ctx, id)
	var ae *nvue.ActionError
	if !errors.Is(err, nvue.ErrActionFailed) || !errors.As(err, &ae) || st.Phase() != nvue.PhaseFailed {
		t.Fatalf("failed action: %+v, %v", st, err)
	}
	if ae.Status.Message() != "flash write error at block 7" {
		t.Fatalf("message = %q", ae.Status.Message())
	}
}

func TestSlowActionWaitTimesOut(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	r.sw.SlowActions(1e6)
	id, err := r.nv.UninstallImage(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.nv.WaitActionFor(r.ctx, id, 100*time.Millisecond)
	if !errors.Is(err, nvue.ErrTimeout) || st.Phase() != nvue.PhaseRunning {
		t.Fatalf("slow action: %+v, %v", st, err)
	}
}

func TestPowerCycleGoesDownAndComesBack(t *testing.T) {
	// The reboot starts 1 s after the action succeeds, so the test sees it go down.
	r := start(t, nvossim.Config{RebootDelay: 1000 * time.Second}, nil)
	id, err := r.nv.PowerCycle(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.nv.WaitAction(r.ctx, id)
	if err != nil || st.Phase() != nvue.PhaseRebooting {
		t.Fatalf("power cycle action: %+v, %v", st, err)
	}
	if err := r.nv.WaitDownUp(r.ctx, "/nvue_v1/platform/firmware", 2*time.Millisecond, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestWaitDownUpNeedsTheSwitchToGoDown(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	err := r.nv.WaitDownUp(r.ctx, "/nvue_v1/platform/firmware", 5*time.Millisecond, 100*time.Millisecond)
	if !errors.Is(err, nvue.ErrTimeout) {
		t.Fatalf("a switch that never rebooted: %v", err)
	}
}

func TestChangeOwnPasswordHandsOverCredentials(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	before := r.sw.Saves()
	nc, err := r.nv.ChangePassword(r.ctx, "admin", hw.NewSecret("Next-Pass-2026"))
	if err != nil {
		t.Fatal(err)
	}
	if nc == r.nv || nc.Endpoint().Credentials.Password.Reveal() != "Next-Pass-2026" {
		t.Fatal("own rotation must return a client with the new password")
	}
	if _, err := nc.System(r.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.nv.System(r.ctx); !errors.Is(err, nvue.ErrUnauthorized) {
		t.Fatalf("old password still accepted: %v", err)
	}
	if r.sw.Saves() != before+1 {
		t.Fatalf("saves = %d, want %d", r.sw.Saves(), before+1)
	}
}

func TestChangeOtherUserPassword(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	nc, err := r.nv.ChangePassword(r.ctx, "monitor", hw.NewSecret("Monitor-Pass-9"))
	if err != nil || nc != r.nv {
		t.Fatalf("rotation of another user: %v (same client %v)", err, nc == r.nv)
	}
	if _, err := r.as(t, "monitor", "Monitor-Pass-9").System(r.ctx); err != nil {
		t.Fatalf("new user login: %v", err)
	}
	if _, err := r.nv.ChangePassword(r.ctx, "bad-name!", hw.NewSecret("x")); !errors.Is(err, nvue.ErrRequest) {
		t.Fatalf("invalid user name: %v", err)
	}
}

func TestRevisionFailureKeepsOldPassword(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	r.sw.FailRevisions("aaa: password does not meet policy")
	_, err := r.nv.ChangePassword(r.ctx, "admin", hw.NewSecret("Rejected-Pass-1"))
	var re *nvue.RevisionError
	if !errors.Is(err, nvue.ErrRevisionFailed) || !errors.As(err, &re) || re.State != "invalid" {
		t.Fatalf("failed revision: %v", err)
	}
	if _, err := r.nv.System(r.ctx); err != nil {
		t.Fatalf("old password must still work: %v", err)
	}
}

func TestEmptyRevisionCountsAsApplied(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	rev, err := r.nv.CreateRevision(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.nv.ApplyRevision(r.ctx, rev); err != nil {
		t.Fatal(err)
	}
	if err := r.nv.WaitRevision(r.ctx, rev); err != nil {
		t.Fatalf("no-diff apply: %v", err)
	}
	if err := r.nv.SaveConfig(r.ctx, rev); err != nil {
		t.Fatal(err)
	}
	if err := r.nv.DeleteRevision(r.ctx, rev); err != nil {
		t.Fatal(err)
	}
	if _, err := r.nv.Revision(r.ctx, rev); !errors.Is(err, nvue.ErrNotFound) {
		t.Fatalf("deleted revision: %v", err)
	}
}

func TestPatchNeedsPendingRevision(t *testing.T) {
	r := start(t, nvossim.Config{}, nil)
	err := r.nv.Patch(r.ctx, "999", "/nvue_v1/system/api", map[string]any{"certificate": "x"})
	if !errors.Is(err, nvue.ErrRequest) {
		t.Fatalf("patch without revision: %v", err)
	}
}

// clientCert issues a self-signed client certificate and a pool trusting it.
func clientCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "rmsd"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

func TestVerifiedTLSAndClientCertificates(t *testing.T) {
	cert, pool := clientCert(t)
	r := start(t, nvossim.Config{HostName: "sw-mtls"}, func(sw *nvossim.Switch) { sw.RequireClientCertificates(pool) })
	// The default (insecure) client has no client certificate: refused.
	if _, err := r.nv.System(r.ctx); !errors.Is(err, nvue.ErrTransport) {
		t.Fatalf("without client certificate: %v", err)
	}
	opts := options()
	opts.TLS, opts.RootCAs, opts.ClientCertificate = nvue.TLSVerify, r.sw.CertPool(), &cert
	if _, err := newClient(t, r.sw.Endpoint(), opts).System(r.ctx); err != nil {
		t.Fatalf("verified mTLS: %v", err)
	}
	opts.RootCAs = x509.NewCertPool() // trusts nothing
	if _, err := newClient(t, r.sw.Endpoint(), opts).System(r.ctx); !errors.Is(err, nvue.ErrTransport) {
		t.Fatalf("untrusted server certificate: %v", err)
	}
}
