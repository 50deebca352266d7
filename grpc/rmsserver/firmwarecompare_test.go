package rmsserver

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/redfish"
	"github.com/rmsd/rmsd/hw/sim/artifactsim"
	"github.com/rmsd/rmsd/hw/sim/simrelease"
)

// Comparison statuses, short.
const (
	cmpMatched    = rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_MATCHED
	cmpMismatched = rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_MISMATCHED
	cmpMissing    = rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_MISSING
	cmpUnverified = rmspb.FirmwareComparisonStatus_FIRMWARE_COMPARISON_STATUS_UNVERIFIED
)

// smallManifest is a GB200 manifest of two versions and no package.
const smallManifest = `{"ProductName": "DGXGB200", "Milestones": [{"Name": "small", "BoardSKUs": [
  {"Type": "Compute Node", "Components": {"Firmware": [{"Component": "BMC", "Version": "GB200Nvl-25.06-3", "Type": "Prod", "Locations": []}]}},
  {"Type": "Switch Tray", "Components": {"Firmware": [{"Component": "CPLD", "Version": "0.1.0.5", "Type": "Prod", "Locations": []}]}}]}]}`

// publishedRelease is the GB200 release of simrelease, published on an
// artifact server nothing downloads from: its versions are not the
// simulator's.
func publishedRelease(t *testing.T) simrelease.Release {
	t.Helper()
	art, err := artifactsim.Start(artifactsim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(art.Close)
	rel, err := simrelease.Publish(art, simrelease.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

// simManifest is a GB200 manifest (no packages) proposing the versions the
// simulated rack's first compute tray, switch and power shelf run.
func simManifest(t *testing.T, s *simRack) string {
	t.Helper()
	compute := simFirmware(t, s, s.ofKind(hw.KindCompute)[0])
	sw := simFirmware(t, s, s.ofKind(hw.KindSwitch)[0])
	shelf := simFirmware(t, s, s.ofKind(hw.KindPowerShelf)[0])
	return fmt.Sprintf(`{"ProductName": "DGXGB200", "Milestones": [{"Name": "sim", "BoardSKUs": [
	  {"Type": "Switch Tray", "Components": {"Firmware": [
	    {"Component": "BMC+FPGA+EROT", "Version": %q, "Type": "Prod", "Locations": [],
	     "SubComponents": [{"Component": "BMC", "Version": %[1]q}, {"Component": "FPGA", "Version": %q}]},
	    {"Component": "SBIOS+EROT", "Version": %q, "Type": "Prod", "Locations": []},
	    {"Component": "CPLD", "Version": "bundle-1", "Type": "Prod", "Locations": [],
	     "SubComponents": [{"Component": "CPLD1", "Version": %q}]}]}},
	  {"Type": "Compute Node", "Components": {"Firmware": [
	    {"Component": "CX7", "Version": "28.44.1036", "Type": "Prod", "Locations": []},
	    {"Component": "HMC", "Version": %q, "Type": "Prod", "Locations": []},
	    {"Component": "BMC", "Version": %q, "Type": "Prod", "Locations": []},
	    {"Component": "Powershelf FW", "Version": "PR-sim", "Type": "Prod", "Locations": [],
	     "SubComponents": [{"Component": "PR1 PSU", "Version": %q, "SKUID": "PR1"}, {"Component": "PR1 PMC", "Version": "0.0.1", "SKUID": "PR1"},
	                       {"Component": "PR3 PMC", "Version": %q, "SKUID": "PR3"}]}]}}]}]}`,
		sw["BMC"], sw["FPGA"], sw["BIOS"], sw["CPLD1"], compute["HGX_FW_BMC_0"], compute["FW_BMC_0"], shelf["FW_PSU_0"], shelf["FW_PMC_0"])
}

// compareComponents renders a node's comparison as "component=installed:status".
func compareComponents(n *rmspb.NodeFirmwareManifestComparison) string {
	var out []string
	for _, c := range n.GetComponents() {
		st := strings.TrimPrefix(c.GetStatus().String(), "FIRMWARE_COMPARISON_STATUS_")
		out = append(out, c.GetComponent()+"="+c.GetInstalledComponent()+":"+st)
	}
	return strings.Join(out, " ")
}

// wantComponents is what each kind of node of the simulated rack compares
// with simManifest without filters: the NIC is opt-in, and the power shelf
// firmware listed under the compute SKU goes to the shelves. (The
// published release has no switch BIOS.)
var wantComponents = map[hw.Kind]string{
	hw.KindCompute:    "HMC=HGX_FW_BMC_0:%[1]s BMC=FW_BMC_0:%[1]s",
	hw.KindSwitch:     "BMC=BMC:%[1]s BIOS=BIOS:%[1]s CPLD=CPLD1:%[1]s",
	hw.KindPowerShelf: "PowerShelfFW=FW_PMC_0:%[1]s",
}

// A whole rack against a release it does not run: every node read, every
// component found and MISMATCHED, with both versions, the target an update
// names it by, and a reason. The reply echoes each node id as sent, and
// the read takes no job and no lease.
func TestCompareFirmwareObjectMismatched(t *testing.T) {
	s := startSimRack(t)
	rel := publishedRelease(t)
	nodes := append([]hw.Node(nil), s.nodes...)
	nodes[0].ID, nodes[20].ID = " Compute Tray #1 ☃ ", "switch/01 (B)"
	before, err := s.engine.Actors(rpcContext(t))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.client.CompareFirmwareObject(rpcContext(t), &rmspb.CompareFirmwareObjectRequest{ConfigJson: rel.ConfigJSON, Nodes: nodeSet(nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || r.GetStats().GetSuccessfulNodes() != 35 || len(r.GetNodeResults()) != 35 ||
		r.GetMessage() != "Compared firmware object DGXGB200_1.3.7 with 35/35 nodes: 0 match, 35 differ" ||
		resp.GetObjectId() != rel.ID || resp.GetMatchesManifest() || len(resp.GetNodes()) != 35 {
		t.Fatalf("CompareFirmwareObject = %v, object %q, matches %v, %d nodes", r, resp.GetObjectId(), resp.GetMatchesManifest(), len(resp.GetNodes()))
	}
	for i, n := range nodes {
		got := resp.GetNodes()[i]
		if got.GetNodeId() != n.ID || r.GetNodeResults()[i].GetNodeId() != n.ID || got.GetMatchesManifest() {
			t.Errorf("node %d = %q (result %q), matches %v; want %q", i, got.GetNodeId(), r.GetNodeResults()[i].GetNodeId(), got.GetMatchesManifest(), n.ID)
		}
		want := fmt.Sprintf(wantComponents[n.Type.Kind()], "MISMATCHED")
		if n.Type.Kind() == hw.KindSwitch {
			want = "BMC=BMC:MISMATCHED CPLD=CPLD1:MISMATCHED"
		}
		if compareComponents(got) != want {
			t.Errorf("%s: %s, want %s", n.ID, compareComponents(got), want)
		}
	}
	// One of each kind in detail.
	detail := map[string]*rmspb.FirmwareManifestComponentComparison{
		"compute BMC":   resp.GetNodes()[0].GetComponents()[1],
		"compute HMC":   resp.GetNodes()[0].GetComponents()[0],
		"switch CPLD":   resp.GetNodes()[20].GetComponents()[1],
		"power shelf":   resp.GetNodes()[34].GetComponents()[0],
		"switch BMC":    resp.GetNodes()[20].GetComponents()[0],
		"compute BMC 2": resp.GetNodes()[1].GetComponents()[1],
	}
	for what, want := range map[string]string{
		"compute BMC":   "GB200Nvl-25.06-3 GB200Nvl-25.04-1 bmc  FW_BMC_0 runs GB200Nvl-25.06-3, the manifest proposes GB200Nvl-25.04-1",
		"compute BMC 2": "GB200Nvl-25.06-3 GB200Nvl-25.04-1 bmc  FW_BMC_0 runs GB200Nvl-25.06-3, the manifest proposes GB200Nvl-25.04-1",
		"compute HMC":   "GB200Nvl-25.06-4 GB200Nvl-25.04-2 /redfish/v1/Chassis/HGX_Chassis_0  HGX_FW_BMC_0 runs GB200Nvl-25.06-4, the manifest proposes GB200Nvl-25.04-2",
		"switch BMC":    "88.0002.1950 88.0002.1400 bmc  BMC runs 88.0002.1950, the manifest proposes 88.0002.1400",
		"switch CPLD":   "CPLD000133_REV3100 0.1.0.7 cpld  CPLD1 runs CPLD000133_REV3100, the manifest proposes 0.1.0.7",
		"power shelf":   "1.2.3 1.2.8 /redfish/v1/UpdateService/FirmwareInventory/FW_PMC_0 PR1 FW_PMC_0 runs 1.2.3, the manifest proposes 1.2.8",
	} {
		c := detail[what]
		if got := strings.Join([]string{c.GetInstalledVersion(), c.GetProposedVersion(), c.GetTarget(), c.GetSkuId(), c.GetReason()}, " "); got != want {
			t.Errorf("%s:\n got %s\nwant %s", what, got, want)
		}
	}
	after, err := s.engine.Actors(rpcContext(t))
	if err != nil || len(after.Actors) != len(before.Actors) || after.HeldNodes != 0 {
		t.Fatalf("a comparison changed the job engine: %d actors before, %+v after, %v", len(before.Actors), after, err)
	}
}

// A manifest proposing what the rack runs: every node matches, and so does
// the reply. Versions match without regard to case; of a subcomponent
// listed for two SKUs, the one the shelf runs matches and names its SKU.
func TestCompareFirmwareObjectAllMatch(t *testing.T) {
	s := startSimRack(t)
	manifest := simManifest(t, s)
	tray := s.device(t, s.ofKind(hw.KindCompute)[3].ID)
	if err := tray.SetFirmware("FW_BMC_0", strings.ToUpper(simFirmware(t, s, s.ofKind(hw.KindCompute)[0])["FW_BMC_0"])); err != nil {
		t.Fatal(err)
	}
	resp, err := s.client.CompareFirmwareObject(rpcContext(t), &rmspb.CompareFirmwareObjectRequest{ConfigJson: manifest, Nodes: nodeSet(s.nodes...)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || !resp.GetMatchesManifest() || resp.GetObjectId() != "DGXGB200_sim" ||
		r.GetMessage() != "Compared firmware object DGXGB200_sim with 35/35 nodes: 35 match, 0 differ" {
		t.Fatalf("CompareFirmwareObject = %v, object %q, matches %v", r, resp.GetObjectId(), resp.GetMatchesManifest())
	}
	for i, n := range s.nodes {
		got := resp.GetNodes()[i]
		if want := fmt.Sprintf(wantComponents[n.Type.Kind()], "MATCHED"); !got.GetMatchesManifest() || compareComponents(got) != want {
			t.Errorf("%s: %s (matches %v), want %s", n.ID, compareComponents(got), got.GetMatchesManifest(), want)
		}
		for _, c := range got.GetComponents() {
			if c.GetReason() != "" || c.GetInstalledVersion() == "" || !strings.EqualFold(c.GetInstalledVersion(), c.GetProposedVersion()) {
				t.Errorf("%s: %v", n.ID, c)
			}
		}
	}
	if c := resp.GetNodes()[3].GetComponents()[1]; c.GetInstalledVersion() != "GB200NVL-25.06-3" || c.GetStatus() != cmpMatched {
		t.Errorf("an upper-case version: %v", c)
	}
	if c := resp.GetNodes()[len(s.nodes)-1].GetComponents()[0]; c.GetSkuId() != "PR3" || c.GetTarget() != redfish.FirmwareInventoryPath+"/FW_PMC_0" {
		t.Errorf("power shelf: %v", c)
	}
}

// Filters pick node types and components: a type the filters do not list
// fails without I/O and lists no component; a listed NIC the tray does not
// report is MISSING, so the tray does not match even though its BMC does.
func TestCompareFirmwareObjectFiltersAndMissing(t *testing.T) {
	s := startSimRack(t)
	manifest := simManifest(t, s)
	compute, sw, shelf := s.ofKind(hw.KindCompute)[2], s.ofKind(hw.KindSwitch)[1], s.ofKind(hw.KindPowerShelf)[1]
	// The shelf is unreachable: the filters leave it out before any I/O.
	shelf.BMC.Port = startSink(t)
	resp, err := s.client.CompareFirmwareObject(rpcContext(t), &rmspb.CompareFirmwareObjectRequest{
		ConfigJson: manifest, Nodes: nodeSet(compute, sw, shelf),
		ComponentFilters: map[int32]*rmspb.FirmwareObjectComponentFilter{
			int32(rmspb.NodeType_COMPUTE_GB200_NVIDIA): {Components: []string{"bmc", "CX7"}},
		},
		NodeDescriptorComponentFilters: []*rmspb.NodeDescriptorFirmwareObjectComponentFilter{{
			NodeDescriptor:  &rmspb.NodeDescriptor{Attributes: sw.Type.Descriptor()},
			ComponentFilter: &rmspb.FirmwareObjectComponentFilter{Components: []string{"cpld"}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetMatchesManifest() || r.GetStats().GetFailedNodes() != 1 ||
		!strings.HasPrefix(r.GetMessage(), "Compared firmware object DGXGB200_sim with 2/3 nodes: 1 match, 1 differ; failed: node_id="+shelf.ID+": the component filters do not list node type") {
		t.Fatalf("CompareFirmwareObject = %v, matches %v", r, resp.GetMatchesManifest())
	}
	for i, want := range []string{"CX7=:MISSING BMC=FW_BMC_0:MATCHED", "CPLD=CPLD1:MATCHED", ""} {
		if got := compareComponents(resp.GetNodes()[i]); got != want {
			t.Errorf("node %d: %s, want %s", i, got, want)
		}
	}
	if cx7 := resp.GetNodes()[0].GetComponents()[0]; cx7.GetReason() != "no firmware inventory entry of the node holds CX7" || cx7.GetProposedVersion() != "28.44.1036" {
		t.Errorf("CX7: %v", cx7)
	}
	if n := resp.GetNodes(); n[0].GetMatchesManifest() || !n[1].GetMatchesManifest() || n[2].GetMatchesManifest() {
		t.Errorf("matches: %v %v %v", n[0].GetMatchesManifest(), n[1].GetMatchesManifest(), n[2].GetMatchesManifest())
	}
}

// A node that cannot be read fails on its own, its components UNVERIFIED
// with the reason; the others are compared, and the reply does not match
// even though every node read does. A switch without a host endpoint fails
// without I/O.
func TestCompareFirmwareObjectUnreachableNode(t *testing.T) {
	s := startSimRack(t)
	manifest := simManifest(t, s)
	compute := s.ofKind(hw.KindCompute)
	down, noHost, sw := compute[4], s.ofKind(hw.KindSwitch)[0], s.ofKind(hw.KindSwitch)[1]
	down.BMC.Port = startSink(t)
	noHost.Host = nil
	resp, err := s.client.CompareFirmwareObject(rpcContext(t), &rmspb.CompareFirmwareObjectRequest{ConfigJson: manifest,
		Nodes: nodeSet(compute[0], down, noHost, sw)})
	if err != nil {
		t.Fatal(err)
	}
	r := resp.GetResponse()
	if r.GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetMatchesManifest() || r.GetStats().GetFailedNodes() != 2 ||
		!strings.HasPrefix(r.GetMessage(), "Compared firmware object DGXGB200_sim with 2/4 nodes: 2 match, 0 differ; failed: node_id="+down.ID+": ") ||
		!strings.Contains(r.GetMessage(), "; node_id="+noHost.ID+": "+errNoSwitchHost.Error()) {
		t.Fatalf("CompareFirmwareObject = %v, matches %v", r, resp.GetMatchesManifest())
	}
	for i, want := range []bool{true, false, false, true} {
		n, res := resp.GetNodes()[i], r.GetNodeResults()[i]
		if n.GetMatchesManifest() != want || (res.GetStatus() == rmspb.ReturnCode_RETURN_CODE_SUCCESS) != want || len(n.GetComponents()) == 0 {
			t.Errorf("node %d: %v; result %v", i, n, res)
		}
		for _, c := range n.GetComponents() {
			if !want && (c.GetStatus() != cmpUnverified || c.GetInstalledComponent() != "" ||
				!strings.HasPrefix(c.GetReason(), "node not compared: ") || !strings.Contains(res.GetErrorMessage(), strings.TrimPrefix(c.GetReason(), "node not compared: "))) {
				t.Errorf("node %d: %v, error %q", i, c, res.GetErrorMessage())
			}
		}
	}
	if got := compareComponents(resp.GetNodes()[1]); got != "HMC=:UNVERIFIED BMC=:UNVERIFIED" {
		t.Errorf("unreachable tray: %s", got)
	}
}

// What the request itself gets wrong is INVALID_ARGUMENT, nothing read: a
// manifest the parser refuses (with its message), a filter of an unknown
// node type, a node without a type.
func TestCompareFirmwareObjectInvalidRequests(t *testing.T) {
	s := startSimRack(t)
	nodes := nodeSet(s.nodes[0])
	tests := []struct {
		name string
		req  *rmspb.CompareFirmwareObjectRequest
		want string
	}{
		{"not JSON", &rmspb.CompareFirmwareObjectRequest{ConfigJson: "BMC=1.0", Nodes: nodes}, "config_json: must be a JSON object"},
		{"empty", &rmspb.CompareFirmwareObjectRequest{Nodes: nodes}, "config_json: is empty"},
		{"two milestones", &rmspb.CompareFirmwareObjectRequest{ConfigJson: `{"ProductName":"DGXGB200","Milestones":[{},{}]}`, Nodes: nodes},
			"config_json: Milestones must contain exactly one milestone, got 2"},
		{"filter of no node type", &rmspb.CompareFirmwareObjectRequest{ConfigJson: simManifest(t, s), Nodes: nodes,
			ComponentFilters: map[int32]*rmspb.FirmwareObjectComponentFilter{999: {}}}, "component_filters: invalid node type 999"},
		{"node without a type", &rmspb.CompareFirmwareObjectRequest{ConfigJson: simManifest(t, s),
			Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{{NodeId: "n1", RackId: "r1"}}}}, "node n1: set type or node_descriptor"},
	}
	for _, tt := range tests {
		_, err := s.client.CompareFirmwareObject(rpcContext(t), tt.req)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), tt.want) {
			t.Errorf("%s: %v, want INVALID_ARGUMENT with %q", tt.name, err, tt.want)
		}
	}
}
