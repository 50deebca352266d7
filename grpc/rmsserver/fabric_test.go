package rmsserver

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/fabric"
	"github.com/rmsd/rmsd/hw/gnmicap"
	"github.com/rmsd/rmsd/hw/nmxc"
	"github.com/rmsd/rmsd/hw/nvue"
	"github.com/rmsd/rmsd/hw/sim"
	"github.com/rmsd/rmsd/hw/sim/nvossim"
	"github.com/rmsd/rmsd/hw/sshsftp"
	"github.com/rmsd/rmsd/messages"
)

// fabricPassword is the simulated rack's password; no reply may carry it.
const fabricPassword = "fabric-Rack-Secret-7"

// startFabricRack is a simulated rack (1000× faster) behind a server whose
// fabric RPCs reach its NVOS hosts, with the fabric's waits shortened.
func startFabricRack(t *testing.T) *simRack {
	t.Helper()
	opts := sim.Options{TimeScale: 0.001, Credentials: hw.UserPass("admin", fabricPassword)}
	return startSimRackFleetDeps(t, opts, func(f *sim.Fleet, d *Deps) {
		nv, err := nvue.NewPool(nvue.Options{Port: f.NVUEPort(), PollInterval: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nv.Close)
		d.Fabric = &fabric.Options{
			NVUE: nv,
			SSH:  sshsftp.Options{Port: f.SSHPort(), HostKey: sshsftp.AcceptAnyHostKey()},
			NMXC: nmxc.Options{Port: f.NMXPort(), HelloRetry: 10 * time.Millisecond, RequestTimeout: 10 * time.Second},
			GNMI: gnmicap.Options{Port: f.GNMIPort()},
			Timing: fabric.Timing{VerifyInterval: 20 * time.Millisecond, ManagerSettle: time.Millisecond, GNMISettle: time.Millisecond,
				GNMIVerifyDelays: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond},
				ConfiguredWindow: time.Second, ConfiguredPoll: 10 * time.Millisecond},
		}
	})
}

func fabricCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// noPassword fails when a reply text shows the rack's password.
func noPassword(t *testing.T, texts ...string) {
	t.Helper()
	for _, s := range texts {
		if strings.Contains(s, fabricPassword) {
			t.Fatalf("a reply shows the password: %s", s)
		}
	}
}

const topo = "gb200_nvl72r1_c2g4_topology"

func TestConfigureScaleUpFabricManagerBringsUpASwitchOnceAndThenOnlyChecks(t *testing.T) {
	r := startFabricRack(t)
	sw := r.ofKind(hw.KindSwitch)[0]
	host := r.nvos(t, sw.ID)
	ctx := fabricCtx(t)
	resp, err := r.client.ConfigureScaleUpFabricManager(ctx, &rmspb.ConfigureScaleUpFabricManagerRequest{Node: NodeInfoToProto(sw), TopologyType: topo})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || !resp.GetScaleUpFabricStateEnabled() || !resp.GetGrpcEnabled() ||
		resp.GetTopologyUsed() != topo || strings.Contains(resp.GetMessage(), "already") {
		t.Fatalf("first configure: %v", resp)
	}
	if v, _ := host.StaticConfig(fabric.FileFM, fabric.KeyTopology); !host.ClusterEnabled() || host.AppManager(fabric.AppController) != "enabled" || v != topo {
		t.Fatalf("switch after configure: cluster %t, manager %q, topology %q", host.ClusterEnabled(), host.AppManager(fabric.AppController), v)
	}
	saves := host.Saves()
	resp, err = r.client.ConfigureScaleUpFabricManager(ctx, &rmspb.ConfigureScaleUpFabricManagerRequest{Node: NodeInfoToProto(sw), TopologyType: topo})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || !strings.Contains(resp.GetMessage(), "already configured") ||
		!resp.GetGrpcEnabled() || !resp.GetScaleUpFabricStateEnabled() {
		t.Fatalf("second configure: %v, %v", resp, err)
	}
	if host.Saves() != saves {
		t.Fatal("the short-circuit changed the switch's configuration")
	}
	// Another topology is set on the configured switch.
	resp, err = r.client.ConfigureScaleUpFabricManager(ctx, &rmspb.ConfigureScaleUpFabricManagerRequest{Node: NodeInfoToProto(sw), TopologyType: "t2"})
	if v, _ := host.StaticConfig(fabric.FileFM, fabric.KeyTopology); err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || v != "t2" {
		t.Fatalf("new topology: %v, %v (switch has %q)", resp, err, v)
	}
}

func TestConfigureScaleUpFabricManagerFailuresAreInBand(t *testing.T) {
	r := startFabricRack(t)
	switches := r.ofKind(hw.KindSwitch)
	compute := r.ofKind(hw.KindCompute)[0]
	ctx := fabricCtx(t)
	configure := func(ni *rmspb.NodeInfo, topology string) *rmspb.ConfigureScaleUpFabricManagerResponse {
		t.Helper()
		resp, err := r.client.ConfigureScaleUpFabricManager(ctx, &rmspb.ConfigureScaleUpFabricManagerRequest{Node: ni, TopologyType: topology})
		if err != nil {
			t.Fatal(err)
		}
		noPassword(t, resp.GetMessage())
		return resp
	}
	for _, c := range []struct {
		name string
		ni   *rmspb.NodeInfo
		topo string
		want string
	}{
		{"no node", nil, topo, "node is required"},
		{"a compute tray", NodeInfoToProto(compute), topo, "switch trays only"},
		{"no topology", NodeInfoToProto(switches[0]), " ", "topology_type is required"},
		{"a topology with spaces", NodeInfoToProto(switches[0]), "a b", "topology_type may only hold"},
	} {
		resp := configure(c.ni, c.topo)
		if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(resp.GetMessage(), c.want) {
			t.Errorf("%s: %v, want FAILURE %q", c.name, resp, c.want)
		}
	}
	if r.nvos(t, switches[0].ID).ClusterEnabled() {
		t.Fatal("a refused request touched the switch")
	}

	// NMX-C never answers: the cluster and external access are on, Hello
	// fails, and the reply says how far it got.
	host := r.nvos(t, switches[1].ID)
	host.NMXCUnavailable(-1)
	resp := configure(NodeInfoToProto(switches[1]), topo)
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !resp.GetScaleUpFabricStateEnabled() || !resp.GetGrpcEnabled() ||
		!strings.Contains(resp.GetMessage(), "Unavailable") || !strings.Contains(resp.GetMessage(), switches[1].ID) {
		t.Fatalf("NMX-C unavailable: %v", resp)
	}
	// Now that both are on, nothing changes: the one Hello's failure is
	// the answer (NMX-C, down for exactly its attempts, is not greeted
	// again), and the next call finds it up.
	host.NMXCUnavailable(nmxc.DefaultHelloAttempts)
	resp = configure(NodeInfoToProto(switches[1]), topo)
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(resp.GetMessage(), "Unavailable") {
		t.Fatalf("NMX-C unavailable, nothing to change: %v", resp)
	}
	if resp = configure(NodeInfoToProto(switches[1]), topo); resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("NMX-C back: %v", resp)
	}
	host.NMXCUnavailable(0)

	// Wrong switch password.
	bad := switches[2]
	badHost := *bad.Host
	badHost.Credentials = hw.UserPass("admin", "wrong-"+fabricPassword)
	bad.Host = &badHost
	resp = configure(NodeInfoToProto(bad), topo)
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(resp.GetMessage(), "401") {
		t.Fatalf("bad credentials: %v", resp)
	}

	// A node type that is not in the enum is malformed.
	ni := NodeInfoToProto(switches[0])
	wrong := rmspb.NodeType(999)
	ni.Type = &wrong
	_, err := r.client.ConfigureScaleUpFabricManager(ctx, &rmspb.ConfigureScaleUpFabricManagerRequest{Node: ni, TopologyType: topo})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("invalid node type: %v, want InvalidArgument", err)
	}
}

func TestBatchSetScaleUpFabricStateSetsEverySwitchConcurrently(t *testing.T) {
	r := startFabricRack(t)
	switches := r.ofKind(hw.KindSwitch)
	compute := r.ofKind(hw.KindCompute)[0]
	ctx := fabricCtx(t)
	resp, err := r.client.BatchSetScaleUpFabricState(ctx, &rmspb.BatchSetScaleUpFabricStateRequest{
		Nodes: nodeSet(switches[0], switches[1], compute, switches[0]), Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	b := resp.GetResponse()
	if b.GetJobId() != "" || b.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || b.GetStats().GetSuccessfulNodes() != 2 ||
		b.GetStats().GetFailedNodes() != 2 || len(b.GetNodeResults()) != 4 {
		t.Fatalf("reply %v", b)
	}
	res := b.GetNodeResults()
	if res[0].GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || res[1].GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS ||
		!strings.Contains(res[2].GetErrorMessage(), "switch trays only") || !strings.Contains(res[3].GetErrorMessage(), "duplicate") {
		t.Fatalf("node results %v", res)
	}
	for _, sw := range switches[:2] {
		if !r.nvos(t, sw.ID).ClusterEnabled() {
			t.Fatalf("%s not enabled", sw.ID)
		}
	}
	if r.nvos(t, switches[2].ID).ClusterEnabled() {
		t.Fatal("a switch not in the request was enabled")
	}
	resp, err = r.client.BatchSetScaleUpFabricState(ctx, &rmspb.BatchSetScaleUpFabricStateRequest{Nodes: nodeSet(switches[0])})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.nvos(t, switches[0].ID).ClusterEnabled() {
		t.Fatalf("disable: %v, %v", resp, err)
	}
	resp, err = r.client.BatchSetScaleUpFabricState(ctx, &rmspb.BatchSetScaleUpFabricStateRequest{})
	if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetResponse().GetMessage() != noNodesMessage {
		t.Fatalf("no nodes: %v, %v", resp, err)
	}
	// A failing apply is that switch's failure.
	r.nvos(t, switches[3].ID).FailNextFabricStep(nvossim.StepClusterState, "apply refused")
	resp, err = r.client.BatchSetScaleUpFabricState(ctx, &rmspb.BatchSetScaleUpFabricStateRequest{Nodes: nodeSet(switches[3], switches[4]), Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	res = resp.GetResponse().GetNodeResults()
	if !strings.Contains(res[0].GetErrorMessage(), "apply refused") || res[1].GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("one failing switch: %v", resp)
	}
}

func TestGetScaleUpFabricStateReadsTheCluster(t *testing.T) {
	r := startFabricRack(t)
	sw := r.ofKind(hw.KindSwitch)[0]
	ctx := fabricCtx(t)
	type stateDoc struct {
		NodeID         string `json:"node_id"`
		Enabled        bool   `json:"enabled"`
		State          string `json:"state"`
		NMXCConn       string `json:"nmxc-conn"`
		ClusterHealthy *bool  `json:"cluster_healthy"`
	}
	read := func() stateDoc {
		t.Helper()
		resp, err := r.client.GetScaleUpFabricState(ctx, &rmspb.GetScaleUpFabricStateRequest{Node: NodeInfoToProto(sw)})
		if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
			t.Fatalf("%v, %v", resp, err)
		}
		var st stateDoc
		if err := json.Unmarshal([]byte(resp.GetStateJson()), &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := read(); st.Enabled || st.State != "disabled" || st.NodeID != sw.ID || st.ClusterHealthy == nil || *st.ClusterHealthy {
		t.Fatalf("fresh: %+v", st)
	}
	r.nvos(t, sw.ID).EnableCluster(true)
	if st := read(); !st.Enabled || st.State != "enabled" || st.NMXCConn != "up" || st.ClusterHealthy == nil || !*st.ClusterHealthy {
		t.Fatalf("enabled: %+v", st)
	}
	r.nvos(t, sw.ID).Unreachable(time.Hour)
	resp, err := r.client.GetScaleUpFabricState(ctx, &rmspb.GetScaleUpFabricStateRequest{Node: NodeInfoToProto(sw)})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetErrorMessage() == "" || resp.GetStateJson() != "" {
		t.Fatalf("unreachable: %v, %v", resp, err)
	}
}

func TestBatchGetScaleUpFabricServiceStatusKeepsHealthInTheMap(t *testing.T) {
	r := startFabricRack(t)
	switches := r.ofKind(hw.KindSwitch)
	compute := r.ofKind(hw.KindCompute)[0]
	r.nvos(t, switches[0].ID).EnableCluster(true)
	bad := switches[2]
	badHost := *bad.Host
	badHost.Credentials = hw.UserPass("admin", "wrong-"+fabricPassword)
	bad.Host = &badHost
	resp, err := r.client.BatchGetScaleUpFabricServiceStatus(fabricCtx(t), &rmspb.BatchGetScaleUpFabricServiceStatusRequest{
		Nodes: nodeSet(switches[0], switches[1], bad, compute)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetServiceStatuses()) != 4 ||
		resp.GetStats().GetSuccessfulNodes() != 2 || resp.GetStats().GetFailedNodes() != 2 {
		t.Fatalf("reply %v", resp)
	}
	type statusDoc struct {
		Installed    bool   `json:"installed"`
		Status       string `json:"status"`
		AdditionInfo string `json:"addition-info"`
		ClusterState string `json:"cluster_state"`
	}
	var on, off statusDoc
	if err := json.Unmarshal([]byte(resp.GetServiceStatuses()[switches[0].ID].GetStatusJson()), &on); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(resp.GetServiceStatuses()[switches[1].ID].GetStatusJson()), &off); err != nil {
		t.Fatal(err)
	}
	if !on.Installed || on.Status != "ok" || on.AdditionInfo != fabric.PlaneConfigured || on.ClusterState != "enabled" {
		t.Fatalf("enabled switch: %+v", on)
	}
	if off.Installed || off.ClusterState != "disabled" {
		t.Fatalf("disabled switch: %+v", off)
	}
	if e := resp.GetServiceStatuses()[bad.ID]; e.GetStatusJson() != "" || !strings.Contains(e.GetErrorMessage(), "401") {
		t.Fatalf("bad credentials: %v", e)
	}
	noPassword(t, resp.GetServiceStatuses()[bad.ID].GetErrorMessage())
	if e := resp.GetServiceStatuses()[compute.ID]; !strings.Contains(e.GetErrorMessage(), "switch trays only") {
		t.Fatalf("compute: %v", e)
	}
	// The reply has no message field: no nodes is INVALID_ARGUMENT, which
	// says why.
	resp, err = r.client.BatchGetScaleUpFabricServiceStatus(fabricCtx(t), &rmspb.BatchGetScaleUpFabricServiceStatusRequest{})
	if status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != noNodesMessage {
		t.Fatalf("no nodes: %v, %v", resp, err)
	}
}

func TestSetScaleUpFabricTelemetryInterfaceStateTogglesGNMI(t *testing.T) {
	r := startFabricRack(t)
	sw := r.ofKind(hw.KindSwitch)[0]
	host := r.nvos(t, sw.ID)
	ctx := fabricCtx(t)
	resp, err := r.client.SetScaleUpFabricTelemetryInterfaceState(ctx, &rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest{Node: NodeInfoToProto(sw), Enable: true})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || !host.GNMIEnabled() {
		t.Fatalf("enable: %v, %v", resp, err)
	}
	var out telemetryResultJSON
	if err := json.Unmarshal([]byte(resp.GetResultJson()), &out); err != nil {
		t.Fatal(err)
	}
	if !out.Enabled || out.GNMIVersion == "" || out.CapabilitiesError != "" {
		t.Fatalf("result %+v", out)
	}
	resp, err = r.client.SetScaleUpFabricTelemetryInterfaceState(ctx, &rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest{Node: NodeInfoToProto(sw)})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || host.GNMIEnabled() {
		t.Fatalf("disable: %v, %v", resp, err)
	}
	compute := r.ofKind(hw.KindCompute)[0]
	resp, err = r.client.SetScaleUpFabricTelemetryInterfaceState(ctx, &rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest{Node: NodeInfoToProto(compute), Enable: true})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(resp.GetErrorMessage(), "switch trays only") {
		t.Fatalf("compute: %v, %v", resp, err)
	}
}

func TestGetScaleUpFabricStatusReportsThePrimarysConfigAndEverySwitch(t *testing.T) {
	r := startFabricRack(t)
	switches := r.ofKind(hw.KindSwitch)
	ctx := fabricCtx(t)
	// switches[1] is the primary; switches[2] is unreachable.
	primary := r.nvos(t, switches[1].ID)
	primary.EnableCluster(true)
	primary.SetStaticConfig(fabric.FileFM, "LOG_LEVEL", "2")
	r.nvos(t, switches[2].ID).Unreachable(time.Hour)
	resp, err := r.client.GetScaleUpFabricStatus(ctx, &rmspb.GetScaleUpFabricStatusRequest{Nodes: nodeSet(switches[0], switches[1], switches[2])})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("%v, %v", resp, err)
	}
	st := resp.GetFabricStatus()
	if st.GetTopologyType() != nvossim.DefaultTopology {
		t.Fatalf("topology %q", st.GetTopologyType())
	}
	// The request names no static config file: none is reported (upstream
	// reads extra entries only of the files a request names).
	if len(st.GetExtraStaticConfigs()) != 0 {
		t.Fatalf("extra configs %v", st.GetExtraStaticConfigs())
	}
	// fabric_manager_status is the app's status string, as upstream's.
	sws := st.GetSwitches()
	if len(sws) != 3 || sws[0].GetEnabled() || sws[0].GetErrorMessage() != "" || !sws[1].GetEnabled() ||
		sws[1].GetFabricManagerStatus() != "ok" || sws[2].GetErrorMessage() == "" {
		t.Fatalf("switches %v", sws)
	}
	// No enabled switch: no topology, still a status of every switch.
	resp, err = r.client.GetScaleUpFabricStatus(ctx, &rmspb.GetScaleUpFabricStatusRequest{Nodes: nodeSet(switches[0])})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || resp.GetFabricStatus().GetTopologyType() != "" ||
		len(resp.GetFabricStatus().GetSwitches()) != 1 {
		t.Fatalf("no primary: %v, %v", resp, err)
	}
	// The primary's controller unreachable over NMX-C: the call fails,
	// keeping what it read of the switches.
	primary.NMXCUnavailable(-1)
	resp, err = r.client.GetScaleUpFabricStatus(ctx, &rmspb.GetScaleUpFabricStatusRequest{Nodes: nodeSet(switches[1])})
	if err != nil || resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(resp.GetFabricStatus().GetSwitches()) != 1 ||
		!resp.GetFabricStatus().GetSwitches()[0].GetEnabled() || !strings.Contains(resp.GetErrorMessage(), "Unavailable") {
		t.Fatalf("nmx-c unavailable: %v, %v", resp, err)
	}
}

func TestInspectScaleUpFabricsObservesEachEnabledControllerAndResolvesMembers(t *testing.T) {
	r := startFabricRack(t)
	switches := r.ofKind(hw.KindSwitch)
	computes := r.ofKind(hw.KindCompute)
	ctx := fabricCtx(t)
	inspect := func(sw, cp []hw.Node) *rmspb.InspectScaleUpFabricsResponse {
		t.Helper()
		req := &rmspb.InspectScaleUpFabricsRequest{Nodes: nodeSet(sw...)}
		if cp != nil {
			req.ComputeNodes = nodeSet(cp...)
		}
		resp, err := r.client.InspectScaleUpFabrics(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// No enabled controller: an empty list, not an error.
	if resp := inspect(switches, computes); resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetFabrics()) != 0 {
		t.Fatalf("no controller: %v", resp)
	}
	primary := switches[2]
	r.nvos(t, primary.ID).EnableCluster(true)
	resp := inspect(switches, computes)
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || len(resp.GetFabrics()) != 1 {
		t.Fatalf("one controller: %v", resp)
	}
	f := resp.GetFabrics()[0]
	normal := rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_NORMAL
	cs := f.GetComponentStatus()
	if f.GetPrimarySwitchNodeId() != primary.ID || f.GetStatus() != normal ||
		f.GetControlPlaneState() != rmspb.ScaleUpFabricControlPlaneState_SCALE_UP_FABRIC_CONTROL_PLANE_STATE_CONFIGURED ||
		cs.GetController() != normal || cs.GetCompute() != normal || cs.GetSwitches() != normal || cs.GetLinks() != normal {
		t.Fatalf("observation %v", f)
	}
	wantIDs := func(nodes []hw.Node) []string {
		var ids []string
		for _, n := range nodes {
			ids = append(ids, n.ID)
		}
		slices.Sort(ids)
		return ids
	}
	if !slices.Equal(f.GetSwitchNodeIds(), wantIDs(switches)) || !slices.Equal(f.GetComputeNodeIds(), wantIDs(computes)) {
		t.Fatalf("members: switches %v, compute %v", f.GetSwitchNodeIds(), f.GetComputeNodeIds())
	}

	// Without the compute inventory the compute trays cannot be resolved:
	// collection errors, UNKNOWN, the observation kept.
	resp = inspect(switches, nil)
	f = resp.GetFabrics()[0]
	unknown := rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_UNKNOWN
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetErrorMessage() == "" || len(f.GetComputeNodeIds()) != 0 ||
		len(f.GetInspectionErrors()) != len(computes) || f.GetStatus() != unknown || len(f.GetSwitchNodeIds()) != len(switches) {
		t.Fatalf("no compute inventory: %v", resp)
	}

	// A down link is observed ABNORMAL; that is not a collection failure.
	r.nvos(t, primary.ID).DegradeFabric("link", true)
	resp = inspect(switches, computes)
	f = resp.GetFabrics()[0]
	abnormal := rmspb.ScaleUpFabricReportedStatus_SCALE_UP_FABRIC_REPORTED_STATUS_ABNORMAL
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || f.GetStatus() != abnormal || f.GetComponentStatus().GetLinks() != abnormal ||
		f.GetComponentStatus().GetCompute() != normal {
		t.Fatalf("down link: %v", resp)
	}
	r.nvos(t, primary.ID).DegradeFabric("link", false)

	// A second controller, and the first one's NMX-C unreachable: both
	// observations in inventory order, the failed reads as its errors.
	r.nvos(t, switches[0].ID).EnableCluster(true)
	r.nvos(t, primary.ID).NMXCUnavailable(-1)
	resp = inspect(switches, computes)
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(resp.GetFabrics()) != 2 {
		t.Fatalf("two controllers: %v", resp)
	}
	first, second := resp.GetFabrics()[0], resp.GetFabrics()[1]
	if first.GetPrimarySwitchNodeId() != switches[0].ID || first.GetStatus() != normal || len(first.GetInspectionErrors()) != 0 {
		t.Fatalf("healthy controller: %v", first)
	}
	if second.GetPrimarySwitchNodeId() != primary.ID || second.GetStatus() != unknown || len(second.GetInspectionErrors()) != 4 ||
		second.GetControlPlaneState() != rmspb.ScaleUpFabricControlPlaneState_SCALE_UP_FABRIC_CONTROL_PLANE_STATE_UNKNOWN {
		t.Fatalf("unreachable controller: %v", second)
	}

	// A compute tray in the switch inventory is a discovery error.
	resp = inspect([]hw.Node{switches[0], computes[0]}, computes)
	if resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || len(resp.GetDiscoveryErrors()) != 1 ||
		resp.GetDiscoveryErrors()[0].GetNodeId() != computes[0].ID || len(resp.GetFabrics()) != 1 {
		t.Fatalf("compute in the switch inventory: %v", resp)
	}
	// No switches at all.
	if resp := inspect(nil, computes); resp.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetErrorMessage() != noNodesMessage {
		t.Fatalf("no switches: %v", resp)
	}
}

// A switch a job holds is not changed by the fabric RPCs: each refuses it
// in-band naming the job; the reads still answer.
func TestFabricChangesRefuseASwitchAJobHolds(t *testing.T) {
	r := startFabricRack(t)
	switches := r.ofKind(hw.KindSwitch)
	held := switches[0]
	release := make(chan struct{})
	job, err := r.engine.Create(rpcContext(t), messages.JobSpec{Type: messages.TypeSwitchSystemImageUpdate, RackID: held.RackID, NodeID: held.ID},
		messages.WorkflowFunc(func(ctx context.Context, rep messages.Reporter) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			_ = rep.Complete("done", "")
		}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer close(release)
	busy := "job already in progress for rack " + held.RackID + " node " + held.ID + " (job_id " + job.ID + ")"
	ctx := fabricCtx(t)
	conf, err := r.client.ConfigureScaleUpFabricManager(ctx, &rmspb.ConfigureScaleUpFabricManagerRequest{Node: NodeInfoToProto(held), TopologyType: topo})
	if err != nil || conf.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(conf.GetMessage(), busy) {
		t.Fatalf("configure a held switch: %v, %v", conf, err)
	}
	batch, err := r.client.BatchSetScaleUpFabricState(ctx, &rmspb.BatchSetScaleUpFabricStateRequest{Nodes: nodeSet(held, switches[1]), Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	res := batch.GetResponse().GetNodeResults()
	if !strings.Contains(res[0].GetErrorMessage(), busy) || res[1].GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("batch with a held switch: %v", batch)
	}
	tel, err := r.client.SetScaleUpFabricTelemetryInterfaceState(ctx, &rmspb.SetScaleUpFabricTelemetryInterfaceStateRequest{Node: NodeInfoToProto(held), Enable: true})
	if err != nil || tel.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(tel.GetErrorMessage(), busy) {
		t.Fatalf("telemetry on a held switch: %v, %v", tel, err)
	}
	host := r.nvos(t, held.ID)
	if host.ClusterEnabled() || host.GNMIEnabled() {
		t.Fatal("a held switch was changed")
	}
	st, err := r.client.GetScaleUpFabricState(ctx, &rmspb.GetScaleUpFabricStateRequest{Node: NodeInfoToProto(held)})
	if err != nil || st.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("read of a held switch: %v, %v", st, err)
	}
}
