package rmsserver

import (
	"maps"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/grpc/rmspbv2"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
)

const (
	testTopology  = "gb200_nvl72r1_c2g4_topology"
	otherTopology = "gb200_nvl36r1_c2g4_topology"
)

// enabledSwitches are the switches a status reports enabled.
func enabledSwitches(st *rmspb.ScaleUpFabricStatus) []string {
	var out []string
	for _, s := range st.GetSwitches() {
		if s.GetEnabled() {
			out = append(out, s.GetNodeId())
		}
	}
	return out
}

func TestFabricReconcileFromAFreshRackThenChangesNothing(t *testing.T) {
	r := startReconcileRack(t)
	want := r.lowestSlot(t)
	st := fabricStatus(t, r.reconcile(t, r.fabricRequest(testTopology)))
	if got := enabledSwitches(st); len(got) != 1 || got[0] != want {
		t.Fatalf("enabled switches %v, want [%s] (lowest slot)", got, want)
	}
	if st.GetTopologyType() != testTopology || len(st.GetSwitches()) != len(r.switches()) {
		t.Errorf("status %v", st)
	}
	states := r.states()
	for _, n := range r.switches() {
		s := states[n.ID]
		if n.ID == want {
			if !s.Enabled || s.Primary != n.Host.Host() || s.Topology != testTopology || s.Manager != "enabled" {
				t.Errorf("primary %s ends %+v", n.ID, s)
			}
			continue
		}
		if s.Enabled || s.Primary != "" || s.Secondary != "" {
			t.Errorf("%s ends %+v", n.ID, s)
		}
	}
	primary := r.host(want)
	if got := primary.ControlPlane(); got != fabric.PlaneConfigured {
		t.Errorf("control plane %q", got)
	}
	restarts, saves := primary.AppRestarts(fabric.AppController), r.saves()
	if restarts != 1 {
		t.Errorf("NMX-C restarted %d times for the new topology, want 1", restarts)
	}

	js := r.reconcile(t, r.fabricRequest(testTopology))
	st = fabricStatus(t, js)
	if got := enabledSwitches(st); len(got) != 1 || got[0] != want {
		t.Errorf("second run: enabled %v", got)
	}
	if got := primary.AppRestarts(fabric.AppController); got != restarts {
		t.Errorf("the second run restarted NMX-C (%d → %d)", restarts, got)
	}
	if got := r.saves(); !maps.Equal(got, saves) {
		t.Errorf("the second run saved switch configs: %v → %v", saves, got)
	}
	if !maps.Equal(r.states(), states) {
		t.Errorf("the second run moved the switches")
	}
	if js.GetStateDescription() != "Scale-up fabric reconciled: no change needed" {
		t.Errorf("description %q", js.GetStateDescription())
	}
	for _, n := range r.switches() {
		if pw := n.Host.Credentials.Password.Reveal(); pw != "" && strings.Contains(r.logs.String(), pw) {
			t.Fatalf("a log shows the password of %s", n.ID)
		}
	}
}

func TestFabricReconcileBridgeConflictTouchesNoSwitch(t *testing.T) {
	r := startReconcileRack(t)
	primary := r.switches()[2].ID
	req := r.fabricRequest(testTopology)
	req.PrimarySwitchNodeId = &primary
	req.Config.ExtraStaticConfigs = []*rmspb.ScaleUpFabricStaticConfig{{ConfigFileName: fabric.FileFM, Key: "LOG_LEVEL", Value: "3"}}
	req.Nodes.Nodes[2].NodeDescriptor = &rmspb.NodeDescriptor{Attributes: map[string]string{"fm_config:LOG_LEVEL": "5"}}
	saves := r.saves()
	js := r.reconcile(t, req)
	if js.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED ||
		js.GetErrorCode() != rmspb.JobError_JOB_ERROR_INVALID_ARGUMENT ||
		!strings.Contains(js.GetErrorMessage(), "fm_config:LOG_LEVEL of primary "+primary) {
		t.Fatalf("job %v: %v %s", js.GetExecutionState(), js.GetErrorCode(), js.GetErrorMessage())
	}
	if got := r.saves(); !maps.Equal(got, saves) {
		t.Errorf("switch configs were saved: %v → %v", saves, got)
	}
	for id, s := range r.states() {
		if s.Enabled {
			t.Errorf("%s was enabled", id)
		}
	}

	// The same attribute on a non-primary is ignored.
	req.Nodes.Nodes[2].NodeDescriptor = nil
	req.Nodes.Nodes[5].NodeDescriptor = &rmspb.NodeDescriptor{Attributes: map[string]string{"fm_config:LOG_LEVEL": "5"}}
	fabricStatus(t, r.reconcile(t, req))
	if v, _ := r.host(primary).StaticConfig(fabric.FileFM, "LOG_LEVEL"); v != "3" {
		t.Errorf("LOG_LEVEL %q, want the request's 3", v)
	}
}

// Each mutating step fails in turn on a rack whose old primary is not the
// switch at the lowest slot: the job fails and every switch is back where
// it was.
func TestFabricReconcileRollsBackAfterEachMutatingStep(t *testing.T) {
	for _, tc := range []struct {
		name  string
		old   bool // the fault is on the old primary, else on the new one
		step  nvossim.FabricStep
		phase string
	}{
		{"disable old primary", true, nvossim.StepClusterState, "disabling the cluster on the other switches"},
		{"clear old primary's node IPs", true, nvossim.StepNodeIPs, "disabling the cluster on the other switches"},
		{"set new primary's node IPs", false, nvossim.StepNodeIPs, "reconciling the primary's node IPs"},
		{"enable new primary", false, nvossim.StepClusterState, "enabling the primary's cluster"},
		{"static config", false, nvossim.StepStaticConfig, "reconciling the static configuration"},
		{"restart NMX-C", false, nvossim.StepAppRestart, "restarting NMX-C"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := startReconcileRack(t)
			lowest := r.lowestSlot(t)
			var old hw.Node
			for _, n := range r.switches() {
				if n.ID != lowest {
					old = n
					break
				}
			}
			oldHost := r.host(old.ID)
			oldHost.EnableCluster(true)
			oldHost.SetNodeIPs(old.Host.Host(), "10.99.0.1")
			target := r.host(lowest)
			if tc.old {
				target = oldHost
			}
			before := r.states()
			target.FailNextFabricStep(tc.step, "injected "+string(tc.step)+" failure")

			js := r.reconcile(t, r.fabricRequest(otherTopology))
			if js.GetExecutionState() != rmspb.JobExecutionState_JOB_EXECUTION_STATE_FAILED {
				t.Fatalf("job %v: %s", js.GetExecutionState(), js.GetStateDescription())
			}
			msg := js.GetErrorMessage()
			if !strings.Contains(msg, "failed while "+tc.phase) || !strings.Contains(msg, "rolled back") {
				t.Errorf("message %q", msg)
			}
			if !strings.HasSuffix(js.GetStateDescription(), "switches restored") {
				t.Errorf("description %q", js.GetStateDescription())
			}
			if got := r.states(); !maps.Equal(got, before) {
				for id := range before {
					if got[id] != before[id] {
						t.Errorf("%s: %+v, was %+v", id, got[id], before[id])
					}
				}
			}
			if strings.Contains(msg, old.Host.Credentials.Password.Reveal()) {
				t.Error("the failure shows a password")
			}
		})
	}
}

func TestFabricReconcileIsOneAtATimePerRack(t *testing.T) {
	r := startReconcileRack(t)
	release := r.hold()
	defer release()
	first := r.submit(t, r.fabricRequest(testTopology))
	eventuallyRPC(t, "the first reconcile waiting for the control plane", func() bool {
		resp, err := r.client.GetJobStatus(rpcContext(t), &rmspb.GetJobStatusRequest{JobId: first})
		return err == nil && len(resp.GetJobStates()) == 1 &&
			strings.Contains(resp.GetJobStates()[0].GetStateDescription(), "waiting for the control plane")
	})
	_, err := r.v2.ConfigureScaleUpFabricManager(rpcContext(t), r.fabricRequest(otherTopology))
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "job already in progress for rack") ||
		!strings.Contains(err.Error(), first) {
		t.Fatalf("second reconcile: %v, want FAILED_PRECONDITION naming job %s", err, first)
	}
	release()
	fabricStatus(t, r.wait(t, first))
	// The rack is free again.
	fabricStatus(t, r.reconcile(t, r.fabricRequest(testTopology)))
}

func TestFabricReconcileRefusesBadRequests(t *testing.T) {
	r := startReconcileRack(t)
	sw := r.switches()
	compute := r.ofKind(hw.KindCompute)
	long := strings.Repeat("d", 300)
	for name, tc := range map[string]struct {
		req  *rmspbv2.ConfigureScaleUpFabricManagerRequest
		want string
	}{
		"no nodes": {&rmspbv2.ConfigureScaleUpFabricManagerRequest{}, "nodes is required"},
		"empty topology": {&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: nodeSet(sw...),
			Config: &rmspbv2.ScaleUpFabricConfig{}}, "config.topology_type is required"},
		"compute node": {&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: nodeSet(sw[0], compute[0]),
			Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: "t"}}, "not a switch"},
		"partial layout": {&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: nodeSet(sw...),
			Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: "t"},
			Layout: &rmspbv2.ScaleUpFabricLayout{Fabrics: []*rmspbv2.ScaleUpFabricSpec{{ComputeTrayCount: 8, SwitchTrayCount: 4}}}},
			"8 compute trays and 4 switch trays is not supported"},
		"oversized domain": {&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: nodeSet(sw...), Domain: &long,
			Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: "t"}}, "domain"},
		"compute without layout": {&rmspbv2.ConfigureScaleUpFabricManagerRequest{Nodes: nodeSet(sw...),
			Config: &rmspbv2.ScaleUpFabricConfig{TopologyType: "t"}, ComputeNodes: nodeSet(compute...)}, "compute_nodes is only valid with layout"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := r.v2.ConfigureScaleUpFabricManager(rpcContext(t), tc.req)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want INVALID_ARGUMENT containing %q", err, tc.want)
			}
		})
	}
}

func TestFabricReconcileWithAFullCapacityLayout(t *testing.T) {
	r := startReconcileRack(t)
	want := r.lowestSlot(t)
	req := r.fabricRequest(testTopology)
	req.Layout = &rmspbv2.ScaleUpFabricLayout{Fabrics: []*rmspbv2.ScaleUpFabricSpec{{ComputeTrayCount: 18, SwitchTrayCount: 9}}}
	req.ComputeNodes = nodeSet(r.ofKind(hw.KindCompute)...)
	resp, err := r.v2.ConfigureScaleUpFabricManager(rpcContext(t), req)
	if err != nil {
		t.Fatal(err)
	}
	sel := resp.GetSelectedFabrics()
	if len(sel) != 1 || sel[0].GetPrimarySwitchNodeId() != want || len(sel[0].GetSwitchNodeIds()) != 9 || len(sel[0].GetComputeNodeIds()) != 18 {
		t.Fatalf("selected fabrics %v, want one with primary %s", sel, want)
	}
	st := fabricStatus(t, r.wait(t, resp.GetJobId()))
	if got := enabledSwitches(st); len(got) != 1 || got[0] != want {
		t.Errorf("enabled %v", got)
	}
}
