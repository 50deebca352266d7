package fabric

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/gnmicap"
	"github.com/rmsd/rmsd/hw/nmxc"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testPassword is the simulated switch's admin password; no error may
// carry it.
const testPassword = "fabric-Secret-9"

// fastTiming keeps the protocol's shape (4 verification reads, one restart
// window...) at test speed; the simulated switch runs 1000× faster.
var fastTiming = Timing{
	VerifyAttempts: 4, VerifyInterval: 20 * time.Millisecond, ManagerSettle: time.Millisecond,
	GNMISettle: time.Millisecond, GNMIVerifyDelays: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond},
	ConfiguredWindow: 2 * time.Second, ConfiguredPoll: 10 * time.Millisecond,
}

// rig is one simulated switch and a fabric.Switch for it.
type rig struct {
	sim *nvossim.Switch
	sw  *Switch
}

func startRig(t testing.TB, tune func(*Options)) *rig {
	t.Helper()
	sim, err := nvossim.New(nvossim.Config{HostName: "sw-a", Password: hw.NewSecret(testPassword), TimeScale: 0.001,
		FabricConvergence: 50 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Start(context.Background(), "127.0.0.1"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	pool, err := nvue.NewPool(nvue.Options{PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	opts := Options{
		NVUE:   pool,
		SSH:    sshsftp.Options{Port: sim.SSHPort(), HostKey: sshsftp.FixedHostKey(sim.HostKey())},
		NMXC:   nmxc.Options{Port: sim.NMXPort(), HelloAttempts: 3, HelloRetry: 10 * time.Millisecond, RequestTimeout: 10 * time.Second},
		GNMI:   gnmicap.Options{Port: sim.GNMIPort()},
		Timing: fastTiming,
	}
	if tune != nil {
		tune(&opts)
	}
	sw, err := New("rack-1-switch-01", sim.Endpoint(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Close)
	return &rig{sim: sim, sw: sw}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// noSecret fails the test when err shows the password.
func noSecret(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), testPassword) {
		t.Fatalf("error shows the password: %v", err)
	}
}

// bringUp enables the cluster and the controller's external gRPC access.
func (r *rig) bringUp(t *testing.T) {
	t.Helper()
	ctx := ctxT(t)
	if _, err := r.sw.SetCluster(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := r.sw.SetAppManager(ctx, AppController, true); err != nil {
		t.Fatal(err)
	}
}

func TestClusterStateIsSetOverSSHAndReadOverNVUE(t *testing.T) {
	r := startRig(t, nil)
	ctx := ctxT(t)
	st, err := r.sw.Cluster(ctx)
	if err != nil || st.Enabled() || st.NMXCConn != "n/a" {
		t.Fatalf("fresh switch: %+v, %v", st, err)
	}
	app, err := r.sw.App(ctx, AppController)
	if err != nil || app.Installed {
		t.Fatalf("controller of a disabled cluster: %+v, %v (want not installed, no error)", app, err)
	}
	saves := r.sim.Saves()
	st, err = r.sw.SetCluster(ctx, true)
	if err != nil || !st.Enabled() || !r.sim.ClusterEnabled() {
		t.Fatalf("enable: %+v, %v (switch enabled=%t)", st, err, r.sim.ClusterEnabled())
	}
	if r.sim.Saves() != saves+1 {
		t.Errorf("config saves %d → %d, want one save", saves, r.sim.Saves())
	}
	app, err = r.sw.App(ctx, AppController)
	if err != nil || !app.Installed || app.Status != "ok" || app.ControlPlane != PlaneUnconfigured || app.Manager != "disabled" {
		t.Fatalf("controller after enabling: %+v, %v", app, err)
	}
	if st, err = r.sw.SetCluster(ctx, false); err != nil || st.Enabled() || r.sim.ClusterEnabled() {
		t.Fatalf("disable: %+v, %v", st, err)
	}
}

func TestAFailedClusterApplyIsReportedWithTheSwitchAndStep(t *testing.T) {
	r := startRig(t, nil)
	r.sim.FailNextFabricStep(nvossim.StepClusterState, "cluster apply rejected")
	_, err := r.sw.SetCluster(ctxT(t), true)
	if err == nil || !strings.Contains(err.Error(), "rack-1-switch-01") || !strings.Contains(err.Error(), "set cluster state enabled") ||
		!strings.Contains(err.Error(), "cluster apply rejected") {
		t.Fatalf("error %v: want the node id, the step and the switch's reason", err)
	}
	noSecret(t, err)
	if r.sim.ClusterEnabled() {
		t.Fatal("the cluster was enabled although its apply failed")
	}
}

func TestAppManagerStartsAStoppedAppAndIsVerified(t *testing.T) {
	r := startRig(t, nil)
	ctx := ctxT(t)
	if err := r.sw.SetAppManager(ctx, AppController, true); err == nil {
		t.Fatal("manager of a disabled cluster's app: no error")
	}
	if _, err := r.sw.SetCluster(ctx, true); err != nil {
		t.Fatal(err)
	}
	// Stop the app: enabling its manager must start it first.
	id, err := r.sw.nv.ClusterAppAction(ctx, AppController, "stop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.sw.nv.WaitAction(ctx, id); err != nil {
		t.Fatal(err)
	}
	if app, _ := r.sw.App(ctx, AppController); app.Status != "stopped" || app.ControlPlane != PlaneStopped {
		t.Fatalf("stopped app reads %+v", app)
	}
	if err := r.sw.SetAppManager(ctx, AppController, true); err != nil {
		t.Fatal(err)
	}
	if got := r.sim.AppManager(AppController); got != "enabled" {
		t.Fatalf("manager %q, want enabled", got)
	}
	if app, _ := r.sw.App(ctx, AppController); app.Status != "ok" || app.Manager != "enabled" {
		t.Fatalf("app after enabling its manager: %+v", app)
	}
	if err := r.sw.SetAppManager(ctx, AppController, false); err != nil || r.sim.AppManager(AppController) != "disabled" {
		t.Fatalf("disable manager: %v, switch has %q", err, r.sim.AppManager(AppController))
	}
}

func TestHelloNeedsExternalAccessAndRetriesOnlyUnavailable(t *testing.T) {
	r := startRig(t, nil)
	ctx := ctxT(t)
	err := r.sw.Hello(ctx)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("hello before the cluster runs: %v, want Unavailable", err)
	}
	r.bringUp(t)
	if err := r.sw.Hello(ctx); err != nil {
		t.Fatal(err)
	}
	// Two Unavailable answers are retried through (3 attempts)...
	r.sim.NMXCUnavailable(2)
	if err := r.sw.Hello(ctx); err != nil {
		t.Fatalf("hello after two unavailable answers: %v", err)
	}
	// ...three are not.
	r.sim.NMXCUnavailable(3)
	err = r.sw.Hello(ctx)
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("hello with NMX-C unavailable: %v", err)
	}
	r.sim.NMXCUnavailable(0)
}

func TestHelloIsNotRetriedOnOtherFailures(t *testing.T) {
	r := startRig(t, func(o *Options) { o.NMXC.GatewayID = " " })
	r.bringUp(t)
	r.sim.NMXCUnavailable(0)
	err := r.sw.Hello(ctxT(t))
	var rc *nmxc.ReturnCodeError
	if !errors.As(err, &rc) || rc.Code.String() != "NMX_ST_BADPARAM" || strings.Contains(err.Error(), "attempts") {
		t.Fatalf("hello with a blank gateway id: %v, want NMX_ST_BADPARAM without retries", err)
	}
}

func TestStaticConfigIsSetReadBackAndReadByFile(t *testing.T) {
	r := startRig(t, nil)
	r.bringUp(t)
	ctx := ctxT(t)
	topo := ConfigKey{File: FileFM, Key: KeyTopology}
	missing := ConfigKey{File: FileFM, Key: "NO_SUCH_KEY"}
	got, err := r.sw.StaticConfig(ctx, []ConfigKey{topo, missing})
	if err != nil || len(got) != 1 || got[0].Value != "" {
		t.Fatalf("fresh topology: %+v, %v (want the empty topology only)", got, err)
	}
	want := []ConfigEntry{{File: FileFM, Key: KeyTopology, Value: "gb200_nvl72r1_c2g4_topology"}, {File: "sm_config", Key: "LOG_LEVEL", Value: "3"}}
	if err := r.sw.SetStaticConfig(ctx, want); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.sim.StaticConfig(FileFM, KeyTopology); v != want[0].Value {
		t.Fatalf("switch topology %q", v)
	}
	all, err := r.sw.StaticConfigFiles(ctx, []string{FileFM, "sm_config"})
	if err != nil {
		t.Fatal(err)
	}
	found := map[ConfigKey]string{}
	for _, e := range all {
		found[e.Name()] = e.Value
	}
	if len(all) != 4 || found[topo] != want[0].Value || found[ConfigKey{File: "sm_config", Key: "LOG_LEVEL"}] != "3" {
		t.Fatalf("whole files: %+v", all)
	}
}

func TestAStaticConfigValueThatDoesNotStickIsNamed(t *testing.T) {
	r := startRig(t, nil)
	r.bringUp(t)
	r.sim.StaticConfigWontStick(FileFM, "LOG_LEVEL", true)
	err := r.sw.SetStaticConfig(ctxT(t), []ConfigEntry{{File: FileFM, Key: KeyTopology, Value: "t1"}, {File: FileFM, Key: "LOG_LEVEL", Value: "2"}})
	if err == nil || !strings.Contains(err.Error(), "fm_config/LOG_LEVEL") || !strings.Contains(err.Error(), `"2"`) {
		t.Fatalf("error %v: want the key that did not stick", err)
	}
}

func TestAFailedSetStaticConfigIsTheControllersReturnCode(t *testing.T) {
	r := startRig(t, nil)
	r.bringUp(t)
	r.sim.FailNextFabricStep(nvossim.StepStaticConfig, "no")
	err := r.sw.SetStaticConfig(ctxT(t), []ConfigEntry{{File: FileFM, Key: KeyTopology, Value: "t1"}})
	if !errors.Is(err, nmxc.ErrNotSuccess) || !strings.Contains(err.Error(), "NMX_ST_GENERIC_ERROR") {
		t.Fatalf("error %v", err)
	}
	if v, _ := r.sim.StaticConfig(FileFM, KeyTopology); v != "" {
		t.Fatalf("topology %q was set by a failed call", v)
	}
}

func TestWaitConfiguredConvergesAfterTheTopologyIsSet(t *testing.T) {
	r := startRig(t, nil)
	r.bringUp(t)
	ctx := ctxT(t)
	if err := r.sw.SetStaticConfig(ctx, []ConfigEntry{{File: FileFM, Key: KeyTopology, Value: "t1"}}); err != nil {
		t.Fatal(err)
	}
	app, err := r.sw.WaitConfigured(ctx)
	if err != nil || !app.Configured() {
		t.Fatalf("wait: %+v, %v", app, err)
	}
	if n := r.sim.AppRestarts(AppController); n != 0 {
		t.Fatalf("%d restarts; a first topology needs none", n)
	}
}

func TestAChangedFMConfigValueNeedsTheOneRestart(t *testing.T) {
	// A window far above the convergence time: a stalled test process
	// must not look like a control plane that never converges.
	r := startRig(t, func(o *Options) { o.Timing.ConfiguredWindow = 5 * time.Second })
	r.sim.EnableCluster(true) // converged with the default topology
	ctx := ctxT(t)
	// An operator changes the topology: the running controller keeps the
	// old one until it restarts.
	r.sim.SetStaticConfig(FileFM, KeyTopology, "t2")
	if err := r.sw.RestartApp(ctx, AppController); err != nil {
		t.Fatal(err)
	}
	if n := r.sim.AppRestarts(AppController); n != 1 {
		t.Fatalf("restarts %d after RestartApp, want 1", n)
	}
	// Right after the restart the control plane converges again:
	// UNCONFIGURED for the convergence time (50 ms), then CONFIGURED.
	app, err := r.sw.WaitConfigured(ctx)
	if err != nil || !app.Configured() {
		t.Fatalf("wait after restart: %+v, %v", app, err)
	}
	if n := r.sim.AppRestarts(AppController); n != 1 {
		t.Fatalf("restarts %d: a converging control plane needs no extra restart", n)
	}
}

func TestWaitConfiguredRestartsOnceAndFailsWithoutATopology(t *testing.T) {
	r := startRig(t, func(o *Options) { o.Timing.ConfiguredWindow = 100 * time.Millisecond })
	r.bringUp(t)
	_, err := r.sw.WaitConfigured(ctxT(t))
	if !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), "after one restart") {
		t.Fatalf("wait without topology: %v", err)
	}
	if n := r.sim.AppRestarts(AppController); n != 1 {
		t.Fatalf("restarts %d, want exactly 1", n)
	}
}

func TestAFailedRestartIsReported(t *testing.T) {
	r := startRig(t, nil)
	r.bringUp(t)
	r.sim.FailNextFabricStep(nvossim.StepAppRestart, "restart refused")
	err := r.sw.RestartApp(ctxT(t), AppController)
	if !errors.Is(err, nvue.ErrActionFailed) || !strings.Contains(err.Error(), "restart refused") {
		t.Fatalf("error %v", err)
	}
}

func TestNodeIPsAreSetInOneRevisionAndCleared(t *testing.T) {
	r := startRig(t, nil)
	ctx := ctxT(t)
	if ips, err := r.sw.NodeIPs(ctx); err != nil || ips != (NodeIPs{}) {
		t.Fatalf("fresh: %+v, %v", ips, err)
	}
	want := NodeIPs{Primary: "10.0.0.11", Secondary: "10.1.0.11"}
	saves := r.sim.Saves()
	if err := r.sw.SetNodeIPs(ctx, want); err != nil {
		t.Fatal(err)
	}
	if p, s := r.sim.NodeIPs(); p != want.Primary || s != want.Secondary {
		t.Fatalf("switch has %q %q", p, s)
	}
	if r.sim.Saves() != saves+1 {
		t.Fatal("node IPs were not saved")
	}
	// Unchanged: nothing is staged or saved.
	if err := r.sw.SetNodeIPs(ctx, want); err != nil || r.sim.Saves() != saves+1 {
		t.Fatalf("no-op: %v, saves %d", err, r.sim.Saves())
	}
	if err := r.sw.SetNodeIPs(ctx, NodeIPs{Primary: "10.0.0.12"}); err != nil {
		t.Fatal(err)
	}
	if p, s := r.sim.NodeIPs(); p != "10.0.0.12" || s != "" {
		t.Fatalf("after clearing secondary: %q %q", p, s)
	}
	r.sim.FailNextFabricStep(nvossim.StepNodeIPs, "address in use")
	err := r.sw.SetNodeIPs(ctx, NodeIPs{})
	if !errors.Is(err, nvue.ErrRevisionFailed) || !strings.Contains(err.Error(), "address in use") {
		t.Fatalf("failed revision: %v", err)
	}
	if p, _ := r.sim.NodeIPs(); p != "10.0.0.12" {
		t.Fatalf("failed revision changed the primary to %q", p)
	}
}

func TestNMXMTLSBindsInstalledCertificatesAndUnsets(t *testing.T) {
	r := startRig(t, nil)
	r.bringUp(t)
	ctx := ctxT(t)
	if b, err := r.sw.NMXMTLS(ctx); err != nil || b.Bound {
		t.Fatalf("fresh binding %+v, %v", b, err)
	}
	if err := r.sw.SetNMXMTLS(ctx, MTLSBinding{Bound: true, Certificate: "nope", CACertificate: "nope-ca"}); !errors.Is(err, nvue.ErrActionFailed) {
		t.Fatalf("binding unknown certificates: %v", err)
	}
	r.sim.BindTLS("api", "cert-1", "ca-1") // installs both ids
	want := MTLSBinding{Bound: true, Certificate: "cert-1", CACertificate: "ca-1"}
	if err := r.sw.SetNMXMTLS(ctx, want); err != nil {
		t.Fatal(err)
	}
	if b, err := r.sw.NMXMTLS(ctx); err != nil || b != want {
		t.Fatalf("binding %+v, %v", b, err)
	}
	// Bound: plaintext NMX-C calls are refused.
	if err := r.sw.Hello(ctx); status.Code(err) != codes.Unavailable {
		t.Fatalf("plaintext hello to an mTLS-bound controller: %v", err)
	}
	r.sim.FailNextFabricStep(nvossim.StepMTLS, "restore refused")
	if err := r.sw.SetNMXMTLS(ctx, MTLSBinding{}); err == nil || !strings.Contains(err.Error(), "restore refused") {
		t.Fatalf("failed unset: %v", err)
	}
	if err := r.sw.SetNMXMTLS(ctx, MTLSBinding{}); err != nil {
		t.Fatal(err)
	}
	if enc, _, _ := r.sim.NMXMTLS(); enc != "none" {
		t.Fatalf("encryption %q after unset", enc)
	}
	if err := r.sw.Hello(ctx); err != nil {
		t.Fatalf("plaintext hello after unset: %v", err)
	}
}

func TestGNMIServerIsToggledAndAnswersCapabilitiesWithTheLogin(t *testing.T) {
	r := startRig(t, nil)
	ctx := ctxT(t)
	if on, err := r.sw.GNMI(ctx); err != nil || on {
		t.Fatalf("fresh gnmi: %t, %v", on, err)
	}
	if _, err := r.sw.GNMICapabilities(ctx); err == nil {
		t.Fatal("capabilities of a disabled gNMI server: no error")
	}
	if err := r.sw.SetGNMI(ctx, true); err != nil {
		t.Fatal(err)
	}
	if on, err := r.sw.GNMI(ctx); err != nil || !on || !r.sim.GNMIEnabled() {
		t.Fatalf("gnmi after enabling: %t, %v", on, err)
	}
	v, err := r.sw.GNMICapabilities(ctx)
	if err != nil || v == "" {
		t.Fatalf("capabilities: %q, %v", v, err)
	}
	// Wrong password: Unauthenticated, and the error does not show it.
	ep := r.sim.Endpoint()
	ep.Credentials.Password = hw.NewSecret("wrong-" + testPassword)
	_, err = gnmicap.Capabilities(ctx, ep, r.sw.opts.GNMI)
	if err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Fatalf("capabilities with a wrong password: %v", err)
	}
	noSecret(t, err)
	if err := r.sw.SetGNMI(ctx, false); err != nil || r.sim.GNMIEnabled() {
		t.Fatalf("disable: %v", err)
	}
}

func TestNMXCOverTLS(t *testing.T) {
	r := startRig(t, func(o *Options) {
		o.NMXC.TLS = insecureTLS()
	})
	r.bringUp(t)
	r.sim.BindTLS("api", "cert-1", "ca-1")
	if err := r.sw.SetNMXMTLS(ctxT(t), MTLSBinding{Bound: true, Certificate: "cert-1", CACertificate: "ca-1"}); err != nil {
		t.Fatal(err)
	}
	if err := r.sw.Hello(ctxT(t)); err != nil {
		t.Fatalf("hello over TLS to an mTLS-bound controller: %v", err)
	}
}

func TestBadCredentialsAreAnErrorWithoutThePassword(t *testing.T) {
	r := startRig(t, nil)
	ep := r.sim.Endpoint()
	ep.Credentials.Password = hw.NewSecret("wrong-" + testPassword)
	sw, err := New("rack-1-switch-01", ep, r.sw.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	_, err = sw.Cluster(ctxT(t))
	if !errors.Is(err, nvue.ErrUnauthorized) {
		t.Fatalf("cluster with bad credentials: %v", err)
	}
	noSecret(t, err)
	_, err = sw.SetCluster(ctxT(t), true)
	if !errors.Is(err, sshsftp.ErrAuth) {
		t.Fatalf("set cluster with bad credentials: %v", err)
	}
	noSecret(t, err)
}

func insecureTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12} //nolint:gosec // simulator's self-signed certificate
}
