package fabricsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/messages"
)

// stepMessages name the steps of the reconcile, in order (steps runs
// them); the job's description names the step under way.
var stepMessages = [...]string{
	"electing the primary switch",
	"mapping the primary's fm_config descriptor attributes",
	"reading the state of every switch",
	"disabling the cluster on the other switches",
	"reconciling the primary's node IPs",
	"enabling the primary's cluster",
	"enabling external gRPC access to NMX-C",
	"reconciling the NMX-C mTLS binding",
	"saying Hello to NMX-C",
	"reconciling the static configuration",
	"restarting NMX-C",
	"waiting for the control plane to be configured",
	"verifying exactly one enabled primary",
}

// steps is the reconcile, in order.
var steps = [len(stepMessages)]func(r *run, ctx context.Context) error{
	(*run).elect, (*run).bridge, (*run).snapshot, (*run).demote, (*run).nodeIPs, (*run).enable, (*run).manager,
	(*run).mtls, (*run).hello, (*run).staticConfig, (*run).restart, (*run).configured, (*run).verify,
}

// errConflict fails a job whose bridged descriptor attribute names a file
// and key the request sets.
var errConflict = errors.New("fm_config descriptor attribute conflicts with the request")

// snapshot is one switch as the job found it.
type snapshot struct {
	cluster fabric.ClusterState
	ips     fabric.NodeIPs
}

// undo reverts one change.
type undo struct {
	what string
	fn   func(ctx context.Context) error
}

// run is one execution of a plan.
type run struct {
	plan Plan
	deps Deps
	job  messages.Reporter

	clients map[string]Switch
	primary hw.Node
	desired []fabric.ConfigEntry // topology, extra, bridged: the primary's static config
	snaps   map[string]snapshot
	binding fabric.MTLSBinding   // its NMX-C mTLS binding, as found
	changed []fabric.ConfigEntry // static config entries set
	status  Status

	restarted bool
	undos     []undo
}

// Workflow returns the reconcile of p as a job workflow. The job engine
// holds the rack's sentinel node and every switch for the job's life.
func (p Plan) Workflow(d Deps) messages.Workflow {
	return messages.WorkflowFunc(func(ctx context.Context, job messages.Reporter) {
		r := &run{plan: p, deps: d, job: job, clients: map[string]Switch{}, snaps: map[string]snapshot{}}
		defer r.close()
		r.execute(ctx)
	})
}

func (r *run) execute(ctx context.Context) {
	for i, run := range steps {
		r.job.Progress(r.describe(i, ""))
		err := ctx.Err()
		if err == nil {
			err = run(r, ctx)
		}
		if err != nil {
			r.fail(ctx, i, err)
			return
		}
	}
	out, err := r.deps.Render(r.status)
	if err != nil {
		r.fail(ctx, len(steps)-1, fmt.Errorf("render the fabric status: %w", err))
		return
	}
	desc := "Scale-up fabric reconciled: no change needed"
	if len(r.undos) > 0 {
		desc = fmt.Sprintf("Scale-up fabric reconciled: %d change(s), primary %s", len(r.undos), r.primary.ID)
	}
	_ = r.job.Complete(desc, out)
}

// describe is the job description during step i, with an optional detail.
func (r *run) describe(i int, detail string) string {
	d := fmt.Sprintf("Scale-up fabric reconcile step %d/%d: %s", i+1, len(stepMessages), stepMessages[i])
	if detail != "" {
		d += ": " + detail
	}
	return d
}

// fail rolls back every change and records the job Failed.
func (r *run) fail(ctx context.Context, i int, err error) {
	msg := fmt.Sprintf("scale-up fabric reconcile of rack %s failed while %s: %v", r.plan.rackID, stepMessages[i], err)
	if ctx.Err() != nil {
		msg = fmt.Sprintf("scale-up fabric reconcile of rack %s cancelled while %s", r.plan.rackID, stepMessages[i])
		if errors.Is(context.Cause(ctx), messages.ErrShuttingDown) {
			msg += ": rmsd is shutting down"
		}
	}
	desc := "Scale-up fabric reconcile failed while " + stepMessages[i]
	if n := len(r.undos); n > 0 {
		r.job.Progress(fmt.Sprintf("Scale-up fabric reconcile: restoring the snapshot (%d change(s))", n))
		if errs := r.rollback(messages.ShieldFromShutdown(ctx)); len(errs) > 0 {
			msg += fmt.Sprintf("; rollback of %d change(s) incomplete: %v", n, errors.Join(errs...))
			desc += "; rollback incomplete"
		} else {
			msg += fmt.Sprintf("; rolled back %d change(s)", n)
			desc += "; switches restored"
		}
	}
	code := messages.ErrorOther
	switch {
	case errors.Is(err, errConflict):
		code = messages.ErrorInvalidArgument
	case errors.Is(err, context.DeadlineExceeded):
		code = messages.ErrorTimeout
	}
	f := messages.NewFailure(code, msg)
	f.Description = desc
	_ = r.job.Fail(f)
}

// rollback runs the undos in reverse order and returns their failures.
func (r *run) rollback(ctx context.Context) []error {
	var errs []error
	for i := len(r.undos) - 1; i >= 0; i-- {
		if err := r.undos[i].fn(ctx); err != nil {
			errs = append(errs, fmt.Errorf("undo %s: %w", r.undos[i].what, err))
		}
	}
	return errs
}

// change records the undo of a change about to be made: a change that
// fails half-way is undone too.
func (r *run) change(what string, fn func(ctx context.Context) error) {
	r.undos = append(r.undos, undo{what: what, fn: fn})
}

// client is the fabric client of switch n, opened once.
func (r *run) client(n hw.Node) (Switch, error) {
	if c, ok := r.clients[n.ID]; ok {
		return c, nil
	}
	c, err := r.deps.Open(n)
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", n.ID, err)
	}
	r.clients[n.ID] = c
	return c, nil
}

func (r *run) close() {
	for _, c := range r.clients {
		switch cl := c.(type) {
		case io.Closer:
			_ = cl.Close() // nothing is left to flush
		case interface{ Close() }:
			cl.Close()
		}
	}
}

// others are the submitted switches other than the primary, in request
// order.
func (r *run) others() []hw.Node {
	var out []hw.Node
	for _, n := range r.plan.req.Switches {
		if n.ID != r.primary.ID {
			out = append(out, n)
		}
	}
	return out
}

func (r *run) elect(ctx context.Context) error {
	if id := r.plan.req.Primary; id != "" {
		for _, n := range r.plan.req.Switches {
			if n.ID == id {
				r.primary = n
			}
		}
		return nil
	}
	n, err := Elect(ctx, r.deps.Slot, r.plan.req.Switches, false)
	if err != nil {
		return err
	}
	r.primary = n
	return nil
}

// bridge builds the primary's desired static config: the topology, the
// extra entries in order, then its fm_config:<key> descriptor attributes
// by key.
func (r *run) bridge(context.Context) error {
	r.desired = append([]fabric.ConfigEntry{{File: fabric.FileFM, Key: fabric.KeyTopology, Value: r.plan.req.Topology}}, r.plan.req.Extra...)
	attrs := r.plan.req.Bridge[r.primary.ID]
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if strings.TrimSpace(k) == "" {
			return fmt.Errorf("%w: switch %s has an fm_config: descriptor attribute without a key", errConflict, r.primary.ID)
		}
		e := fabric.ConfigEntry{File: fabric.FileFM, Key: k, Value: attrs[k]}
		for _, d := range r.desired {
			if d.Name() == e.Name() {
				return fmt.Errorf("%w: descriptor attribute fm_config:%s of primary %s sets %s %s, which the request sets too",
					errConflict, k, r.primary.ID, e.File, e.Key)
			}
		}
		r.desired = append(r.desired, e)
	}
	return nil
}

func (r *run) snapshot(ctx context.Context) error {
	for _, n := range r.plan.req.Switches {
		r.job.Progress(r.describe(2, n.ID))
		c, err := r.client(n)
		if err != nil {
			return err
		}
		var s snapshot
		if s.cluster, err = c.Cluster(ctx); err != nil {
			return err
		}
		if s.ips, err = c.NodeIPs(ctx); err != nil {
			return err
		}
		r.snaps[n.ID] = s
	}
	c, err := r.client(r.primary)
	if err != nil {
		return err
	}
	// A switch whose cluster is off has no controller app and no binding
	// to read: they read not installed and unbound.
	if r.binding, err = c.NMXMTLS(ctx); err != nil {
		return err
	}
	return nil
}

// demote disables the cluster and clears the node IPs of every other
// switch: the cluster first, so no controller serves without addresses.
func (r *run) demote(ctx context.Context) error {
	for _, n := range r.others() {
		r.job.Progress(r.describe(3, n.ID))
		c, err := r.client(n)
		if err != nil {
			return err
		}
		s := r.snaps[n.ID]
		if s.cluster.Enabled() {
			r.change("cluster of "+n.ID, func(ctx context.Context) error {
				_, err := c.SetCluster(ctx, true)
				return err
			})
			if _, err := c.SetCluster(ctx, false); err != nil {
				return err
			}
		}
		if s.ips != (fabric.NodeIPs{}) {
			r.change("node IPs of "+n.ID, func(ctx context.Context) error { return c.SetNodeIPs(ctx, s.ips) })
			if err := c.SetNodeIPs(ctx, fabric.NodeIPs{}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *run) nodeIPs(ctx context.Context) error {
	addr, ok := nodeAddr(*r.primary.Host)
	if !ok {
		return fmt.Errorf("primary %s: its host_endpoint address %s is not an IP address, so it cannot be its node IP",
			r.primary.ID, hw.QuoteShort(r.primary.Host.Host()))
	}
	was := r.snaps[r.primary.ID].ips
	want := fabric.NodeIPs{Primary: addr, Secondary: was.Secondary}
	if s, ok := r.plan.secondary[r.primary.ID]; ok {
		want.Secondary = s
	}
	if want == was {
		return nil
	}
	c, err := r.client(r.primary)
	if err != nil {
		return err
	}
	r.change("node IPs of "+r.primary.ID, func(ctx context.Context) error { return c.SetNodeIPs(ctx, was) })
	return c.SetNodeIPs(ctx, want)
}

func (r *run) enable(ctx context.Context) error {
	if r.snaps[r.primary.ID].cluster.Enabled() {
		return nil
	}
	c, err := r.client(r.primary)
	if err != nil {
		return err
	}
	r.change("cluster of "+r.primary.ID, func(ctx context.Context) error {
		_, err := c.SetCluster(ctx, false)
		return err
	})
	_, err = c.SetCluster(ctx, true)
	return err
}

// manager enables external gRPC access to the controller, which the
// primary's cluster now runs, when it is off.
func (r *run) manager(ctx context.Context) error {
	c, err := r.client(r.primary)
	if err != nil {
		return err
	}
	app, err := c.App(ctx, fabric.AppController)
	if err != nil {
		return err
	}
	if !app.Installed {
		return fmt.Errorf("switch %s: %s is not installed although the cluster is enabled", r.primary.ID, fabric.AppController)
	}
	if app.ManagerEnabled() {
		return nil
	}
	r.change(fabric.AppController+" manager of "+r.primary.ID, func(ctx context.Context) error {
		return c.SetAppManager(ctx, fabric.AppController, false)
	})
	return c.SetAppManager(ctx, fabric.AppController, true)
}

// mtls unsets the binding (insecure_switch), or restores the binding the
// snapshot saw (secure mode); SetNMXMTLS verifies it by reading it back.
// A primary whose snapshot shows no binding (never provisioned, or its
// cluster was off, so there was none to read) keeps whatever it has: rmsd
// does not know which certificates it should be bound to.
func (r *run) mtls(ctx context.Context) error {
	c, err := r.client(r.primary)
	if err != nil {
		return err
	}
	cur, err := c.NMXMTLS(ctx)
	if err != nil {
		return err
	}
	want := r.binding
	switch {
	case r.plan.req.Insecure && !cur.Bound:
		return nil
	case r.plan.req.Insecure:
		want = fabric.MTLSBinding{}
	case !want.Bound || cur == want:
		return nil
	}
	r.change("NMX-C mTLS binding of "+r.primary.ID, func(ctx context.Context) error { return c.SetNMXMTLS(ctx, cur) })
	return c.SetNMXMTLS(ctx, want)
}

func (r *run) hello(ctx context.Context) error {
	c, err := r.client(r.primary)
	if err != nil {
		return err
	}
	err = c.Hello(ctx)
	if err == nil || r.plan.req.Insecure {
		return err
	}
	// In secure mode rmsd speaks to NMX-C over mTLS only; a controller
	// never bound to it cannot answer. Say what to do about it.
	if b, rerr := c.NMXMTLS(ctx); rerr == nil && !b.Bound {
		return fmt.Errorf("%w (NMX-C on %s is not bound to mTLS and rmsd uses plaintext only with [switches] insecure_switch: "+
			"bind it with ConfigureSwitchCertificate, service SCALE_UP_FABRIC_MANAGER, first)", err, r.primary.ID)
	}
	return err
}

// staticConfig sets the desired entries whose value differs from the
// primary's (or that it lacks), in order.
func (r *run) staticConfig(ctx context.Context) error {
	c, err := r.client(r.primary)
	if err != nil {
		return err
	}
	cur, err := desiredValues(ctx, c, r.desired)
	if err != nil {
		return err
	}
	var old []fabric.ConfigEntry
	for _, e := range r.desired {
		v, ok := cur[e.Name()]
		if ok && v == e.Value {
			continue
		}
		r.changed = append(r.changed, e)
		if ok {
			old = append(old, fabric.ConfigEntry{File: e.File, Key: e.Key, Value: v})
		}
	}
	if len(r.changed) == 0 {
		return nil
	}
	r.change("static config of "+r.primary.ID, func(ctx context.Context) error {
		if len(old) > 0 {
			if err := c.SetStaticConfig(ctx, old); err != nil {
				return err
			}
		}
		if r.restarted {
			return c.RestartApp(ctx, fabric.AppController)
		}
		return nil
	})
	return c.SetStaticConfig(ctx, r.changed)
}

// restart restarts NMX-C when an fm_config value changed: the controller
// reads its file at start. Other files take effect without.
func (r *run) restart(ctx context.Context) error {
	fm := false
	for _, e := range r.changed {
		fm = fm || e.File == fabric.FileFM
	}
	if !fm {
		return nil
	}
	c, err := r.client(r.primary)
	if err != nil {
		return err
	}
	r.restarted = true
	return c.RestartApp(ctx, fabric.AppController)
}

func (r *run) configured(ctx context.Context) error {
	c, err := r.client(r.primary)
	if err != nil {
		return err
	}
	st, err := c.WaitConfigured(ctx)
	if err != nil {
		return err
	}
	if !st.Configured() {
		return fmt.Errorf("switch %s: the control plane is %s, not configured", r.primary.ID, orNone(st.ControlPlane))
	}
	return nil
}

// verify reads every switch's cluster back (exactly the primary must be
// enabled) and the fabric status the job reports.
func (r *run) verify(ctx context.Context) error {
	st := Status{Topology: r.plan.req.Topology}
	var enabled []string
	for _, n := range r.plan.req.Switches {
		c, err := r.client(n)
		if err != nil {
			return err
		}
		cl, err := c.Cluster(ctx)
		if err != nil {
			return err
		}
		s := SwitchStatus{NodeID: n.ID, Enabled: cl.Enabled()}
		if s.Enabled {
			enabled = append(enabled, n.ID)
		}
		switch app, err := c.App(ctx, fabric.AppController); {
		case err != nil:
			s.Error = err.Error()
		case !app.Installed:
			// upstream's read_switch: an app NVUE does not have reports
			// no status.
			s.ManagerStatus = ""
		default:
			s.ManagerStatus = app.Status
		}
		st.Switches = append(st.Switches, s)
	}
	if len(enabled) != 1 || enabled[0] != r.primary.ID {
		return fmt.Errorf("expected exactly one enabled switch, the primary %s; enabled: [%s]", r.primary.ID, strings.Join(enabled, ", "))
	}
	c, err := r.client(r.primary)
	if err != nil {
		return err
	}
	byKey, err := desiredValues(ctx, c, r.desired)
	if err != nil {
		return err
	}
	for i, e := range r.desired {
		v, ok := byKey[e.Name()]
		if !ok || v != e.Value {
			return fmt.Errorf("switch %s: static config %s %s reads %q, want %q", r.primary.ID, e.File, e.Key, v, e.Value)
		}
		if i == 0 {
			st.Topology = v
			continue
		}
		st.Extra = append(st.Extra, fabric.ConfigEntry{File: e.File, Key: e.Key, Value: v})
	}
	r.status = st
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// desiredValues reads from c the current value of every desired entry's
// key; a key the switch has no value for is absent from the map.
func desiredValues(ctx context.Context, c Switch, desired []fabric.ConfigEntry) (map[fabric.ConfigKey]string, error) {
	keys := make([]fabric.ConfigKey, len(desired))
	for i, e := range desired {
		keys[i] = e.Name()
	}
	found, err := c.StaticConfig(ctx, keys)
	if err != nil {
		return nil, err
	}
	vals := make(map[fabric.ConfigKey]string, len(found))
	for _, e := range found {
		vals[e.Name()] = e.Value
	}
	return vals, nil
}
