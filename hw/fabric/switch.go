package fabric

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/nmxc"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/pause"
	"github.com/rmsd/rmsd/hw/sshsftp"
)

// Switch drives the fabric services of one switch, reached at its host
// endpoint with its NVOS credentials. Build one per request with New and
// Close it afterwards. Every error names the switch's node id and the step
// that failed, never a credential.
type Switch struct {
	id     string
	ep     hw.Endpoint
	opts   Options
	timing Timing
	nv     *nvue.Client
	nmx    *nmxc.Client
}

// New builds the switch nodeID from its host endpoint (address, NVUE
// port, credentials). Nothing is contacted yet.
func New(nodeID string, host hw.Endpoint, opts Options) (*Switch, error) {
	if opts.NVUE == nil {
		return nil, fmt.Errorf("switch %s: fabric: no NVUE pool", nodeID)
	}
	nv, err := opts.NVUE.Client(host)
	if err != nil {
		return nil, fmt.Errorf("switch %s: fabric: %w", nodeID, err)
	}
	nmx, err := nmxc.New(host, opts.NMXC)
	if err != nil {
		return nil, fmt.Errorf("switch %s: fabric: %w", nodeID, err)
	}
	return &Switch{id: nodeID, ep: host, opts: opts, timing: opts.Timing.withDefaults(), nv: nv, nmx: nmx}, nil
}

// Close releases the switch's NMX-C connection.
func (s *Switch) Close() {
	_ = s.nmx.Close()
	s.nv.Close()
}

// NodeID is the switch's node id.
func (s *Switch) NodeID() string { return s.id }

// fail wraps err with the switch and the step.
func (s *Switch) fail(step string, err error) error {
	return fmt.Errorf("switch %s: %s: %w", s.id, step, err)
}

// runNV runs commands over one SSH connection, stopping at the first that
// fails.
func (s *Switch) runNV(ctx context.Context, cmds ...string) (string, error) {
	c, err := sshsftp.Dial(ctx, s.ep, s.opts.SSH)
	if err != nil {
		return "", err
	}
	defer c.Close()
	var out string
	for _, cmd := range cmds {
		if out, err = c.Output(ctx, cmd); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Cluster reads the cluster state.
func (s *Switch) Cluster(ctx context.Context) (ClusterState, error) {
	c, err := s.nv.Cluster(ctx)
	if err != nil {
		return ClusterState{}, s.fail("read cluster state", err)
	}
	return ClusterState{State: c.State, NMXCConn: c.NMXCConn, Doc: c.Doc}, nil
}

func onOff(enabled bool) string {
	if enabled {
		return "enabled"
	}
	return "disabled"
}

// SetCluster enables or disables the cluster over SSH (nv set cluster
// state, apply, save), then re-reads it until it shows the wanted state.
func (s *Switch) SetCluster(ctx context.Context, enabled bool) (ClusterState, error) {
	want := onOff(enabled)
	if _, err := s.runNV(ctx, "nv set cluster state "+want, "nv config apply --assume-yes", "nv config save"); err != nil {
		return ClusterState{}, s.fail("set cluster state "+want, err)
	}
	var last ClusterState
	err := s.verify(ctx, func() (bool, error) {
		st, err := s.Cluster(ctx)
		last = st
		return err == nil && st.State == want, err
	})
	if err != nil {
		return last, s.fail("verify cluster state "+want, fmt.Errorf("%w (last state %q)", err, last.State))
	}
	return last, nil
}

// errNotVerified: a change did not show within the verification reads.
var errNotVerified = errors.New("change not visible after the verification reads")

// verify reads at once and then every VerifyInterval, VerifyAttempts
// times in all, until ok reports true; transient read errors are retried.
func (s *Switch) verify(ctx context.Context, ok func() (bool, error)) error {
	var last error
	for i := 0; i < s.timing.VerifyAttempts; i++ {
		if i > 0 {
			if err := pause.For(ctx, s.timing.VerifyInterval); err != nil {
				return err
			}
		}
		done, err := ok()
		if done {
			return nil
		}
		last = err
	}
	if last != nil {
		return fmt.Errorf("%w (last error: %v)", errNotVerified, last)
	}
	return errNotVerified
}

// App reads a cluster app; an app the switch does not have (404) is
// AppStatus{Installed: false} without error.
func (s *Switch) App(ctx context.Context, app string) (AppStatus, error) {
	a, err := s.nv.ClusterApp(ctx, app)
	if errors.Is(err, nvue.ErrNotFound) {
		return AppStatus{}, nil
	}
	if err != nil {
		return AppStatus{}, s.fail("read cluster app "+app, err)
	}
	return AppStatus{Installed: true, Status: a.Status, Reason: a.Reason, ControlPlane: a.ControlPlane, Manager: a.Manager, Doc: a.Doc}, nil
}

// managerOn reports whether a manager state means external gRPC access.
func managerOn(state string) bool { return state == "enabled" || state == "active" }

// SetAppManager turns an app's external gRPC access on or off over SSH,
// starting a stopped app first, and verifies it by re-reading the manager.
func (s *Switch) SetAppManager(ctx context.Context, app string, enabled bool) error {
	a, err := s.App(ctx, app)
	if err != nil {
		return err
	}
	if !a.Installed {
		return s.fail("set manager of "+app, fmt.Errorf("cluster app %s is not installed (is the cluster enabled?)", app))
	}
	var cmds []string
	if enabled && a.Status == "stopped" {
		cmds = append(cmds, "nv action start cluster apps "+app)
	}
	cmds = append(cmds, "nv action update cluster apps "+app+" manager "+onOff(enabled))
	if _, err := s.runNV(ctx, cmds...); err != nil {
		return s.fail("set manager of "+app+" "+onOff(enabled), err)
	}
	if err := pause.For(ctx, s.timing.ManagerSettle); err != nil {
		return s.fail("set manager of "+app, err)
	}
	var last string
	err = s.verify(ctx, func() (bool, error) {
		st, err := s.nv.ClusterAppManager(ctx, app)
		last = st
		return err == nil && managerOn(st) == enabled, err
	})
	if err != nil {
		return s.fail("verify manager of "+app+" "+onOff(enabled), fmt.Errorf("%w (last state %q)", err, last))
	}
	return nil
}

// RestartApp stops and starts a cluster app (NVUE @stop, then @start),
// waiting for each action.
func (s *Switch) RestartApp(ctx context.Context, app string) error {
	for _, verb := range []string{"stop", "start"} {
		id, err := s.nv.ClusterAppAction(ctx, app, verb)
		if err != nil {
			return s.fail("restart "+app, err)
		}
		if _, err := s.nv.WaitAction(ctx, id); err != nil {
			return s.fail("restart "+app+" (@"+verb+")", err)
		}
	}
	return nil
}

// NodeIPs reads the applied primary and secondary node addresses.
func (s *Switch) NodeIPs(ctx context.Context) (NodeIPs, error) {
	var out NodeIPs
	for _, f := range []struct {
		iface string
		dst   *string
	}{{nvue.NodePrimary, &out.Primary}, {nvue.NodeSecondary, &out.Secondary}} {
		ips, err := s.nv.ClusterNodeServers(ctx, f.iface, "applied")
		if err != nil {
			return NodeIPs{}, s.fail("read node IPs", err)
		}
		if len(ips) > 0 {
			*f.dst = ips[0]
		}
	}
	return out, nil
}

// SetNodeIPs makes the node addresses want in one revision (an interface
// that changes is cleared, then given its new address unless that is
// empty), applies and saves it, and verifies the result. Nothing changes
// when the switch already has want.
func (s *Switch) SetNodeIPs(ctx context.Context, want NodeIPs) error {
	have, err := s.NodeIPs(ctx)
	if err != nil {
		return err
	}
	if have == want {
		return nil
	}
	rev, err := s.nv.CreateRevision(ctx)
	if err != nil {
		return s.fail("set node IPs", err)
	}
	applied := false
	defer func() {
		if !applied {
			// The staged revision is useless now; the step's error is
			// what the caller needs.
			_ = s.nv.DeleteRevision(context.WithoutCancel(ctx), rev)
		}
	}()
	for _, f := range []struct{ iface, have, want string }{
		{nvue.NodePrimary, have.Primary, want.Primary}, {nvue.NodeSecondary, have.Secondary, want.Secondary},
	} {
		if f.have == f.want {
			continue
		}
		if err := s.nv.ClearClusterNode(ctx, rev, f.iface); err != nil {
			return s.fail("set node IPs", err)
		}
		if f.want != "" {
			if err := s.nv.StageClusterNodeServer(ctx, rev, f.iface, f.want); err != nil {
				return s.fail("set node IPs", err)
			}
		}
	}
	if err := s.nv.ApplyRevision(ctx, rev); err != nil {
		return s.fail("set node IPs", err)
	}
	applied = true
	if err := s.nv.WaitRevision(ctx, rev); err != nil {
		return s.fail("set node IPs", err)
	}
	if err := s.nv.SaveConfig(ctx, rev); err != nil {
		return s.fail("set node IPs", err)
	}
	got, err := s.NodeIPs(ctx)
	if err != nil {
		return err
	}
	if got != want {
		return s.fail("verify node IPs", fmt.Errorf("%w: want primary %q secondary %q, switch has %q %q",
			errNotVerified, want.Primary, want.Secondary, got.Primary, got.Secondary))
	}
	return nil
}

// Hello greets NMX-C (retried only on gRPC Unavailable).
func (s *Switch) Hello(ctx context.Context) error {
	if _, err := s.nmx.Hello(ctx); err != nil {
		return s.fail("nmx-c hello", err)
	}
	return nil
}

func entriesFrom(in []nmxc.Entry) []ConfigEntry {
	out := make([]ConfigEntry, 0, len(in))
	for _, e := range in {
		out = append(out, ConfigEntry(e))
	}
	return out
}

// StaticConfig reads the given keys; keys the controller does not report
// are absent from the result.
func (s *Switch) StaticConfig(ctx context.Context, keys []ConfigKey) ([]ConfigEntry, error) {
	q := make([]nmxc.Key, 0, len(keys))
	asked := map[ConfigKey]bool{}
	for _, k := range keys {
		q = append(q, nmxc.Key(k))
		asked[k] = true
	}
	got, err := s.nmx.GetStaticConfig(ctx, q, nil)
	if err != nil {
		return nil, s.fail("read static config", err)
	}
	var out []ConfigEntry
	for _, e := range entriesFrom(got) {
		if asked[e.Name()] {
			out = append(out, e)
		}
	}
	return out, nil
}

// StaticConfigFiles reads every entry of whole static config files.
func (s *Switch) StaticConfigFiles(ctx context.Context, files []string) ([]ConfigEntry, error) {
	got, err := s.nmx.GetStaticConfig(ctx, nil, files)
	if err != nil {
		return nil, s.fail("read static config files", err)
	}
	return entriesFrom(got), nil
}

// SetStaticConfig sets entries and reads them back; a value that did not
// stick is an error naming its file and key.
func (s *Switch) SetStaticConfig(ctx context.Context, entries []ConfigEntry) error {
	if len(entries) == 0 {
		return nil
	}
	set := make([]nmxc.Entry, 0, len(entries))
	keys := make([]ConfigKey, 0, len(entries))
	for _, e := range entries {
		set = append(set, nmxc.Entry(e))
		keys = append(keys, e.Name())
	}
	if err := s.nmx.SetStaticConfig(ctx, set); err != nil {
		return s.fail("set static config", err)
	}
	got, err := s.StaticConfig(ctx, keys)
	if err != nil {
		return err
	}
	have := map[ConfigKey]string{}
	for _, e := range got {
		have[e.Name()] = e.Value
	}
	for _, e := range entries {
		v, ok := have[e.Name()]
		if !ok {
			return s.fail("verify static config", fmt.Errorf("%s/%s: %w: the controller does not report the key", e.File, e.Key, errNotVerified))
		}
		if v != e.Value {
			return s.fail("verify static config", fmt.Errorf("%s/%s: %w: set %q, controller reports %q", e.File, e.Key, errNotVerified, e.Value, v))
		}
	}
	return nil
}

// ErrNotConfigured: the controller's control plane did not report
// CONFIGURED in time.
var ErrNotConfigured = errors.New("fabric: control plane not configured")

// WaitConfigured waits for the controller's control plane to report
// CONFIGURED, polling every ConfiguredPoll for ConfiguredWindow. When the
// window ends after a non-configured state was reported, the controller
// app is restarted once and a second window follows.
func (s *Switch) WaitConfigured(ctx context.Context) (AppStatus, error) {
	last, sawState, err := s.waitWindow(ctx)
	if err == nil || !sawState {
		return last, err
	}
	if rerr := s.RestartApp(ctx, AppController); rerr != nil {
		return last, rerr
	}
	last, _, err = s.waitWindow(ctx)
	if err != nil {
		return last, fmt.Errorf("%w (after one restart of %s)", err, AppController)
	}
	return last, nil
}

// waitWindow is one window of WaitConfigured; sawState reports whether a
// non-configured control-plane state was read.
func (s *Switch) waitWindow(ctx context.Context) (last AppStatus, sawState bool, err error) {
	deadline := time.Now().Add(s.timing.ConfiguredWindow)
	var lastErr error
	for {
		a, err := s.App(ctx, AppController)
		switch {
		case err != nil:
			lastErr = err
		case a.Configured():
			return a, sawState, nil
		default:
			last, lastErr = a, nil
			if a.Installed && a.ControlPlane != "" {
				sawState = true
			}
		}
		if !time.Now().Add(s.timing.ConfiguredPoll).Before(deadline) {
			break
		}
		if err := pause.For(ctx, s.timing.ConfiguredPoll); err != nil {
			return last, sawState, s.fail("wait for configured control plane", err)
		}
	}
	detail := fmt.Sprintf("last state %q, status %q", last.ControlPlane, last.Status)
	if !last.Installed {
		detail = AppController + " not installed"
	}
	if lastErr != nil {
		detail += fmt.Sprintf("; last error: %v", lastErr)
	}
	return last, sawState, s.fail("wait for configured control plane",
		fmt.Errorf("%w within %s (%s)", ErrNotConfigured, s.timing.ConfiguredWindow, detail))
}

// NMXMTLS reads the controller manager's mTLS binding.
func (s *Switch) NMXMTLS(ctx context.Context) (MTLSBinding, error) {
	enc, err := s.nv.ClusterAppManagerLeaf(ctx, AppController, "encryption")
	if errors.Is(err, nvue.ErrNotFound) {
		return MTLSBinding{}, nil
	}
	if err != nil {
		return MTLSBinding{}, s.fail("read nmx-c mtls binding", err)
	}
	b := MTLSBinding{}
	mode, _ := enc["encryption"].(string)
	b.Bound = mode == "mtls"
	if cert, err := s.nv.ClusterAppManagerLeaf(ctx, AppController, "certificate"); err == nil {
		b.Certificate, _ = cert["cert-id"].(string)
	} else if !errors.Is(err, nvue.ErrNotFound) {
		return MTLSBinding{}, s.fail("read nmx-c mtls binding", err)
	}
	if ca, err := s.nv.ClusterAppManagerLeaf(ctx, AppController, "ca-certificate"); err == nil {
		b.CACertificate, _ = ca["cacert-id"].(string)
	} else if !errors.Is(err, nvue.ErrNotFound) {
		return MTLSBinding{}, s.fail("read nmx-c mtls binding", err)
	}
	return b, nil
}

// SetNMXMTLS binds the controller manager to the installed certificate
// and CA certificate ids of b and turns mTLS on (NVUE @update actions,
// southbound §3.11), or restores its default encryption when !b.Bound (nv
// action restore over SSH). The result is read back.
func (s *Switch) SetNMXMTLS(ctx context.Context, b MTLSBinding) error {
	if !b.Bound {
		if _, err := s.runNV(ctx, "nv action restore cluster apps "+AppController+" manager encryption"); err != nil {
			return s.fail("unset nmx-c mtls", err)
		}
	} else {
		if b.Certificate == "" || b.CACertificate == "" {
			return s.fail("bind nmx-c mtls", errors.New("certificate and CA certificate ids are required"))
		}
		for _, u := range []struct {
			leaf   string
			params map[string]any
		}{
			{"certificate", map[string]any{"cert-id": b.Certificate}},
			{"ca-certificate", map[string]any{"cacert-id": b.CACertificate}},
			{"encryption", map[string]any{"encryption": "mtls"}},
		} {
			id, err := s.nv.UpdateClusterAppManager(ctx, AppController, u.leaf, u.params)
			if err != nil {
				return s.fail("bind nmx-c mtls", err)
			}
			if _, err := s.nv.WaitAction(ctx, id); err != nil {
				return s.fail("bind nmx-c mtls ("+u.leaf+")", err)
			}
			if err := pause.For(ctx, s.timing.ManagerSettle); err != nil {
				return s.fail("bind nmx-c mtls", err)
			}
		}
	}
	got, err := s.NMXMTLS(ctx)
	if err != nil {
		return err
	}
	if got.Bound != b.Bound || (b.Bound && (got.Certificate != b.Certificate || got.CACertificate != b.CACertificate)) {
		return s.fail("verify nmx-c mtls binding", fmt.Errorf("%w: want bound=%t cert %q ca %q, switch has bound=%t cert %q ca %q",
			errNotVerified, b.Bound, b.Certificate, b.CACertificate, got.Bound, got.Certificate, got.CACertificate))
	}
	return nil
}
