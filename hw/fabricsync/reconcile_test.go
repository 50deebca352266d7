package fabricsync

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/messages"
	"github.com/rmsd/rmsd/messages/messagestest"
)

// testRack is four model switches, s1..s4 at slots 3, 4, 1, 2: s3 is at
// the lowest position.
type testRack struct {
	models map[string]*model
	nodes  []hw.Node
}

func newTestRack() *testRack {
	r := &testRack{models: map[string]*model{}}
	for i, slot := range []int64{3, 4, 1, 2} {
		id := fmt.Sprintf("s%d", i+1)
		r.models[id] = newModel(id, slot)
		r.nodes = append(r.nodes, hw.Node{ID: id, RackID: "rack-1", Type: hw.SwitchGB200Nvidia,
			Host: &hw.Endpoint{IP: fmt.Sprintf("10.0.0.%d", i+1), Credentials: hw.UserPass("admin", "s3cret")}})
	}
	return r
}

func (r *testRack) deps() Deps {
	return Deps{
		Open: func(n hw.Node) (Switch, error) { return r.models[n.ID], nil },
		Slot: func(_ context.Context, n hw.Node) (*int64, error) { return r.models[n.ID].slot, nil },
		Render: func(s Status) (string, error) {
			b, err := json.Marshal(s)
			return string(b), err
		},
	}
}

func (r *testRack) states() map[string]modelState {
	out := map[string]modelState{}
	for id, m := range r.models {
		out[id] = m.state()
	}
	return out
}

// forget clears the models' call logs.
func (r *testRack) forget() {
	for _, m := range r.models {
		m.mu.Lock()
		m.calls, m.sets = nil, nil
		m.mu.Unlock()
	}
}

func (r *testRack) request() Request {
	return Request{Switches: r.nodes, Topology: "gb200_nvl72r1_c2g4_topology"}
}

// reconcile checks req and runs its job to the end.
func (r *testRack) reconcile(t *testing.T, req Request) *messagestest.Recorder {
	t.Helper()
	p, err := Check(req)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	rep := &messagestest.Recorder{}
	p.Workflow(r.deps()).Run(context.Background(), rep)
	if !rep.Done {
		t.Fatal("the job recorded no terminal state")
	}
	return rep
}

func mustComplete(t *testing.T, rep *messagestest.Recorder) Status {
	t.Helper()
	if rep.Failure != nil {
		t.Fatalf("job failed: %s: %s", rep.Failure.Description, rep.Failure.Message)
	}
	var st Status
	if err := json.Unmarshal([]byte(rep.Result), &st); err != nil {
		t.Fatalf("result %q: %v", rep.Result, err)
	}
	return st
}

func enabledIn(st Status) []string {
	var out []string
	for _, s := range st.Switches {
		if s.Enabled {
			out = append(out, s.NodeID)
		}
	}
	return out
}

var topoKey = fabric.ConfigKey{File: fabric.FileFM, Key: fabric.KeyTopology}

func TestFreshRackGetsOnePrimaryAtTheLowestSlot(t *testing.T) {
	r := newTestRack()
	rep := r.reconcile(t, r.request())
	st := mustComplete(t, rep)
	if got := enabledIn(st); !slices.Equal(got, []string{"s3"}) {
		t.Errorf("enabled switches %v, want [s3] (lowest slot)", got)
	}
	if st.Topology != "gb200_nvl72r1_c2g4_topology" || len(st.Switches) != 4 || st.Switches[0].NodeID != "s1" {
		t.Errorf("status %+v", st)
	}
	p := r.models["s3"].state()
	if p.Cluster != "enabled" || p.Manager != "enabled" || p.IPs != (fabric.NodeIPs{Primary: "10.0.0.3"}) || p.Static[topoKey] != "gb200_nvl72r1_c2g4_topology" {
		t.Errorf("primary ends %+v", p)
	}
	if n := r.models["s3"].restarts(); n != 1 {
		t.Errorf("NMX-C restarted %d times for a new topology, want 1", n)
	}
	for _, id := range []string{"s1", "s2", "s4"} {
		if m := r.models[id].mutations(); len(m) != 0 {
			t.Errorf("%s, already disabled without node IPs, got %v", id, m)
		}
	}
	if !slices.ContainsFunc(rep.Steps, func(d string) bool {
		return strings.HasPrefix(d, "Scale-up fabric reconcile step 12/13: waiting for the control plane to be configured")
	}) {
		t.Errorf("no description named the wait for the control plane: %q", rep.Steps)
	}
}

func TestSecondRunChangesAndRestartsNothing(t *testing.T) {
	r := newTestRack()
	req := r.request()
	req.Extra = []fabric.ConfigEntry{{File: "nmx_config", Key: "LOG_LEVEL", Value: "debug"}}
	mustComplete(t, r.reconcile(t, req))
	before, restarts := r.states(), r.models["s3"].restarts()
	r.forget()
	rep := r.reconcile(t, req)
	st := mustComplete(t, rep)
	for id, m := range r.models {
		if c := m.mutations(); len(c) != 0 {
			t.Errorf("second run changed %s: %v", id, c)
		}
	}
	if got := r.models["s3"].restarts(); got != restarts {
		t.Errorf("second run restarted NMX-C (%d → %d)", restarts, got)
	}
	if !reflect.DeepEqual(r.states(), before) {
		t.Errorf("second run moved the switches")
	}
	if rep.Desc != "Scale-up fabric reconciled: no change needed" {
		t.Errorf("description %q", rep.Desc)
	}
	if !slices.Equal(enabledIn(st), []string{"s3"}) || len(st.Extra) != 1 || st.Extra[0].Value != "debug" {
		t.Errorf("status %+v", st)
	}
}

func TestOnlyChangedKeysAreSet(t *testing.T) {
	r := newTestRack()
	req := r.request()
	req.Extra = []fabric.ConfigEntry{
		{File: fabric.FileFM, Key: "FM_TIMEOUT", Value: "30"}, // the switch has it
		{File: "nmx_config", Key: "LOG_LEVEL", Value: "debug"},
	}
	mustComplete(t, r.reconcile(t, req))
	want := [][]fabric.ConfigEntry{{
		{File: fabric.FileFM, Key: fabric.KeyTopology, Value: "gb200_nvl72r1_c2g4_topology"},
		{File: "nmx_config", Key: "LOG_LEVEL", Value: "debug"},
	}}
	if got := r.models["s3"].sets; !reflect.DeepEqual(got, want) {
		t.Errorf("SetStaticConfig calls %v, want %v", got, want)
	}
}

func TestRestartOnlyWhenAnFMConfigValueChanged(t *testing.T) {
	r := newTestRack()
	req := r.request()
	mustComplete(t, r.reconcile(t, req))
	base := r.models["s3"].restarts()

	req.Extra = []fabric.ConfigEntry{{File: "nmx_config", Key: "LOG_LEVEL", Value: "debug"}}
	mustComplete(t, r.reconcile(t, req))
	if got := r.models["s3"].restarts(); got != base {
		t.Errorf("a change to another file restarted NMX-C (%d → %d)", base, got)
	}
	if v := r.models["s3"].state().Static[fabric.ConfigKey{File: "nmx_config", Key: "LOG_LEVEL"}]; v != "debug" {
		t.Errorf("LOG_LEVEL %q", v)
	}

	req.Extra = append(req.Extra, fabric.ConfigEntry{File: fabric.FileFM, Key: "FM_TIMEOUT", Value: "60"})
	mustComplete(t, r.reconcile(t, req))
	if got := r.models["s3"].restarts(); got != base+1 {
		t.Errorf("an fm_config change restarted NMX-C %d times, want 1", got-base)
	}
}

func TestRequestedPrimaryAndSecondaryNodeIP(t *testing.T) {
	r := newTestRack()
	r.nodes[1].AdditionalHosts = []hw.Endpoint{{IP: "10.1.0.2", Port: 9, Credentials: hw.UserPass("x", "y")}, {IP: "10.1.0.99"}}
	req := r.request()
	req.Primary = "s2"
	st := mustComplete(t, r.reconcile(t, req))
	if got := enabledIn(st); !slices.Equal(got, []string{"s2"}) {
		t.Errorf("enabled %v, want [s2]", got)
	}
	if ips := r.models["s2"].state().IPs; ips != (fabric.NodeIPs{Primary: "10.0.0.2", Secondary: "10.1.0.2"}) {
		t.Errorf("primary node IPs %+v", ips)
	}

	// Omitting the secondary keeps it.
	r.nodes[1].AdditionalHosts = nil
	mustComplete(t, r.reconcile(t, req))
	if ips := r.models["s2"].state().IPs; ips.Secondary != "10.1.0.2" {
		t.Errorf("an omitted secondary was changed: %+v", ips)
	}

	// Moving the primary clears the old one's addresses and cluster.
	req.Primary = "s4"
	st = mustComplete(t, r.reconcile(t, req))
	if got := enabledIn(st); !slices.Equal(got, []string{"s4"}) {
		t.Errorf("enabled %v, want [s4]", got)
	}
	if s := r.models["s2"].state(); s.Cluster != "disabled" || s.IPs != (fabric.NodeIPs{}) {
		t.Errorf("old primary ends %+v", s)
	}
}

func TestBridgedDescriptorAttributes(t *testing.T) {
	r := newTestRack()
	req := r.request()
	req.Bridge = map[string]map[string]string{
		"s3": {"FM_TIMEOUT": "90"},
		"s1": {fabric.KeyTopology: "ignored on a non-primary"},
	}
	st := mustComplete(t, r.reconcile(t, req))
	if v := r.models["s3"].state().Static[fabric.ConfigKey{File: fabric.FileFM, Key: "FM_TIMEOUT"}]; v != "90" {
		t.Errorf("bridged FM_TIMEOUT %q", v)
	}
	if len(st.Extra) != 1 || st.Extra[0] != (fabric.ConfigEntry{File: fabric.FileFM, Key: "FM_TIMEOUT", Value: "90"}) {
		t.Errorf("status extra %+v", st.Extra)
	}
}

func TestBridgeConflictFailsBeforeTouchingSwitches(t *testing.T) {
	for name, req := range map[string]func(Request) Request{
		"extra static config": func(q Request) Request {
			q.Extra = []fabric.ConfigEntry{{File: fabric.FileFM, Key: "FM_TIMEOUT", Value: "60"}}
			q.Bridge = map[string]map[string]string{"s3": {"FM_TIMEOUT": "90"}}
			return q
		},
		"topology": func(q Request) Request {
			q.Bridge = map[string]map[string]string{"s3": {fabric.KeyTopology: "other"}}
			return q
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := newTestRack()
			r.models["s1"].st.Cluster = "enabled" // something to change, were it to go on
			rep := r.reconcile(t, req(r.request()))
			if rep.Failure == nil || rep.Failure.Code != messages.ErrorInvalidArgument || !strings.Contains(rep.Failure.Message, "conflicts") {
				t.Fatalf("want an invalid-argument failure naming the conflict, got %+v", rep.Failure)
			}
			for id, m := range r.models {
				if c := m.mutations(); len(c) != 0 {
					t.Errorf("%s was changed: %v", id, c)
				}
			}
		})
	}
}

// messyRack has an old primary s1 (enabled, both node IPs, the old
// topology) and s3, the switch at the lowest slot, bound to mTLS
// certificates: reconciling it in insecure mode changes every kind of
// state there is.
func messyRack() *testRack {
	r := newTestRack()
	s1 := r.models["s1"]
	s1.st.Cluster, s1.st.Manager = "enabled", "enabled"
	s1.st.IPs = fabric.NodeIPs{Primary: "10.0.0.1", Secondary: "10.1.0.1"}
	s1.st.Static[topoKey] = "old"
	s3 := r.models["s3"]
	s3.st.IPs = fabric.NodeIPs{Secondary: "10.1.0.3"}
	s3.st.Binding = fabric.MTLSBinding{Bound: true, Certificate: "rms-a-cert-1", CACertificate: "rms-a-ca-1"}
	return r
}

func messyRequest(r *testRack) Request {
	req := r.request()
	req.Insecure = true
	req.Extra = []fabric.ConfigEntry{{File: "nmx_config", Key: "LOG_LEVEL", Value: "debug"}}
	return req
}

func TestMessyRackReconciles(t *testing.T) {
	r := messyRack()
	st := mustComplete(t, r.reconcile(t, messyRequest(r)))
	if got := enabledIn(st); !slices.Equal(got, []string{"s3"}) {
		t.Errorf("enabled %v", got)
	}
	if got, want := r.models["s1"].mutations(), []string{"SetCluster", "SetNodeIPs"}; !slices.Equal(got, want) {
		t.Errorf("old primary got %v, want %v", got, want)
	}
	s3 := r.models["s3"].state()
	if s3.Binding.Bound || s3.IPs != (fabric.NodeIPs{Primary: "10.0.0.3", Secondary: "10.1.0.3"}) {
		t.Errorf("primary ends %+v", s3)
	}
}

func TestSecureModeKeepsTheBinding(t *testing.T) {
	r := messyRack()
	req := messyRequest(r)
	req.Insecure = false
	mustComplete(t, r.reconcile(t, req))
	if b := r.models["s3"].state().Binding; !b.Bound || b.Certificate != "rms-a-cert-1" {
		t.Errorf("binding %+v", b)
	}
	if slices.Contains(r.models["s3"].mutations(), "SetNMXMTLS") {
		t.Error("a binding that was in place was set again")
	}
}

// Any failure after a change restores every switch to its snapshot.
func TestRollbackAfterEachMutatingStep(t *testing.T) {
	for _, tc := range []struct{ node, method string }{
		{"s1", "SetCluster"},
		{"s1", "SetNodeIPs"},
		{"s3", "SetNodeIPs"},
		{"s3", "SetCluster"},
		{"s3", "SetAppManager"},
		{"s3", "SetNMXMTLS"},
		{"s3", "SetStaticConfig"},
		{"s3", "RestartApp"},
		{"s3", "WaitConfigured"},
	} {
		t.Run(tc.node+"-"+tc.method, func(t *testing.T) {
			r := messyRack()
			if tc.method == "WaitConfigured" {
				r.models[tc.node].failRead = tc.method
			} else {
				r.models[tc.node].fail = tc.method
			}
			before := r.states()
			rep := r.reconcile(t, messyRequest(r))
			if rep.Failure == nil {
				t.Fatal("the job completed")
			}
			if !strings.Contains(rep.Failure.Message, errInjected.Error()) || !strings.Contains(rep.Failure.Message, "rolled back") {
				t.Errorf("message %q", rep.Failure.Message)
			}
			if !strings.HasSuffix(rep.Failure.Description, "switches restored") {
				t.Errorf("description %q", rep.Failure.Description)
			}
			if got := r.states(); !reflect.DeepEqual(got, before) {
				t.Errorf("after rollback\n got %+v\nwant %+v", got, before)
			}
			if strings.Contains(rep.Failure.Message, "s3cret") {
				t.Error("the failure carries a password")
			}
		})
	}
}

func TestRollbackFailureIsReportedWithTheOriginalError(t *testing.T) {
	r := messyRack()
	r.models["s3"].fail = "SetStaticConfig"
	r.models["s3"].undoFails = true
	rep := r.reconcile(t, messyRequest(r))
	if rep.Failure == nil {
		t.Fatal("the job completed")
	}
	msg := rep.Failure.Message
	if !strings.Contains(msg, "failed while reconciling the static configuration") || !strings.Contains(msg, "rollback of") ||
		strings.Count(msg, errInjected.Error()) < 2 {
		t.Errorf("message %q", msg)
	}
	if !strings.HasSuffix(rep.Failure.Description, "rollback incomplete") {
		t.Errorf("description %q", rep.Failure.Description)
	}
	// The undos of the other switch still ran.
	if s := r.models["s1"].state(); s.Cluster != "enabled" || s.IPs.Primary != "10.0.0.1" {
		t.Errorf("s1 not restored: %+v", s)
	}
}

func TestReadFailureBeforeAnyChangeRollsNothingBack(t *testing.T) {
	r := messyRack()
	r.models["s4"].failRead = "NodeIPs"
	rep := r.reconcile(t, messyRequest(r))
	if rep.Failure == nil || strings.Contains(rep.Failure.Message, "rolled back") ||
		!strings.Contains(rep.Failure.Message, "reading the state of every switch") {
		t.Fatalf("failure %+v", rep.Failure)
	}
	for id, m := range r.models {
		if c := m.mutations(); len(c) != 0 {
			t.Errorf("%s was changed: %v", id, c)
		}
	}
}

func TestCancelledJobRestoresTheSnapshot(t *testing.T) {
	r := messyRack()
	before := r.states()
	p, err := Check(messyRequest(r))
	if err != nil {
		t.Fatal(err)
	}
	// The engine's workflow context: the start of a shutdown cancels it,
	// a hard stop would cancel hard.
	hard, stop := context.WithCancel(context.Background())
	defer stop()
	soft, cancel := context.WithCancelCause(hard)
	ctx := messages.WorkflowContext(soft, hard)
	deps := r.deps()
	open := deps.Open
	deps.Open = func(n hw.Node) (Switch, error) {
		sw, err := open(n)
		return cancelOnRestart{Switch: sw, cancel: func() { cancel(messages.ErrShuttingDown) }}, err
	}
	rep := &messagestest.Recorder{}
	p.Workflow(deps).Run(ctx, rep)
	if rep.Failure == nil || !strings.Contains(rep.Failure.Message, "rmsd is shutting down") {
		t.Fatalf("failure %+v", rep.Failure)
	}
	if got := r.states(); !reflect.DeepEqual(got, before) {
		t.Errorf("after a cancel\n got %+v\nwant %+v", got, before)
	}
}

// cancelOnRestart ends the job's context when NMX-C restarts (the start of
// a shutdown arriving mid-reconcile).
type cancelOnRestart struct {
	Switch
	cancel func()
}

func (c cancelOnRestart) RestartApp(ctx context.Context, app string) error {
	err := c.Switch.RestartApp(ctx, app)
	c.cancel()
	return err
}

func TestSecureModeRestoresTheBindingTheSnapshotSaw(t *testing.T) {
	r := newTestRack()
	s3 := r.models["s3"]
	bound := fabric.MTLSBinding{Bound: true, Certificate: "rms-a-cert-1", CACertificate: "rms-a-ca-1"}
	s3.st.Cluster, s3.st.Binding, s3.managerResetsBinding = "enabled", bound, true
	mustComplete(t, r.reconcile(t, r.request()))
	if b := s3.state().Binding; b != bound {
		t.Errorf("binding %+v, want %+v restored", b, bound)
	}
	if got := s3.mutations(); !slices.Contains(got, "SetNMXMTLS") {
		t.Errorf("the binding was not restored: %v", got)
	}
}
