package rmsserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rmsd/rmsd/actors"
	"github.com/rmsd/rmsd/grpc/rmspb"
	"github.com/rmsd/rmsd/hw"
	"github.com/rmsd/rmsd/hw/racks"
	"github.com/rmsd/rmsd/messages"
)

func userPassEndpoint(ip, user, password string) *rmspb.Endpoint {
	return &rmspb.Endpoint{
		Interface:   &rmspb.NetworkInterface{IpAddress: ip, MacAddress: "aa:bb:cc:00:00:01"},
		Port:        443,
		Credentials: &rmspb.Credentials{Auth: &rmspb.Credentials_UserPass{UserPass: &rmspb.UsernamePassword{Username: user, Password: password}}},
	}
}

func typedNode(rack, id string, t rmspb.NodeType) *rmspb.NodeInfo {
	return &rmspb.NodeInfo{NodeId: id, RackId: rack, Type: &t, BmcEndpoint: userPassEndpoint(bmcIP(rack, id), "admin", "bmc-pw")}
}

// bmcIPs gives each (rack, node) of the tests a BMC address of its own (a
// BMC is registered under one node only), the same one every time.
var bmcIPs = struct {
	sync.Mutex
	of map[string]string
}{of: map[string]string{}}

// bmcIP returns the BMC address of a test node.
func bmcIP(rack, id string) string {
	bmcIPs.Lock()
	defer bmcIPs.Unlock()
	k := rack + "/" + id
	if ip, ok := bmcIPs.of[k]; ok {
		return ip
	}
	n := len(bmcIPs.of) + 1
	ip := fmt.Sprintf("10.%d.%d.%d", 100+n>>16, byte(n>>8), byte(n))
	bmcIPs.of[k] = ip
	return ip
}

func describedNode(rack, id string, attrs map[string]string) *rmspb.NodeInfo {
	return &rmspb.NodeInfo{NodeId: id, RackId: rack, NodeDescriptor: &rmspb.NodeDescriptor{Attributes: attrs},
		BmcEndpoint: userPassEndpoint("10.0.0.2", "admin", "bmc-pw")}
}

func inventoryClient(t *testing.T) (rmspb.RackManagerClient, *racks.Registry) {
	c, reg, _ := inventoryFixture(t)
	return c, reg
}

func inventoryFixture(t *testing.T) (rmspb.RackManagerClient, *racks.Registry, *actors.Engine) {
	reg := racks.New([]string{"gb200-prod"})
	e := newTestEngine(t)
	runner := newOfflineRunner(t)
	return rmspb.NewRackManagerClient(startTestServer(t, Deps{Racks: reg, Jobs: e, Nodes: runner})), reg, e
}

func TestCreateNodesThenListRacksAndInventory(t *testing.T) {
	client, _ := inventoryClient(t)
	ctx := rpcContext(t)
	sw := typedNode("rack-a", "switch-1", rmspb.NodeType_SWITCH_GB200_NVIDIA)
	sw.HostEndpoint = userPassEndpoint("10.0.1.1", "admin", "nvos-pw")
	resp, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		typedNode("rack-a", "compute-1", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
		describedNode("rack-a", "shelf-1", map[string]string{"role": "Power Shelf", "vendor": "liteon", "product_family": "GB200", "inventory_profile": "gb200-prod"}),
		sw,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || resp.GetStats().GetSuccessfulNodes() != 3 {
		t.Fatalf("CreateNodes = %v", resp)
	}
	racksResp, err := client.ListRacks(ctx, &rmspb.ListRacksRequest{})
	if err != nil || strings.Join(racksResp.GetRackIds(), ",") != "rack-a" {
		t.Fatalf("ListRacks = %v, %v", racksResp, err)
	}
	inv, err := client.ListNodeInventory(ctx, &rmspb.ListNodeInventoryRequest{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*rmspb.NodeInventoryInfo{}
	for _, n := range inv.GetNodes() {
		byID[n.GetNodeId()] = n
	}
	shelf := byID["shelf-1"]
	if shelf.GetType() != rmspb.NodeType_POWERSHELF_GB200_LITEON || shelf.GetRackId() != "rack-a" ||
		shelf.GetNodeDescriptor().GetAttributes()["inventory_profile"] != "gb200-prod" ||
		shelf.GetNodeDescriptor().GetAttributes()["role"] != "power_shelf" {
		t.Fatalf("descriptor-registered shelf listed as %v", shelf)
	}
	if s := byID["switch-1"]; strings.Join(s.GetHostIpAddresses(), ",") != "10.0.1.1" || s.GetIpAddress() != bmcIP("rack-a", "switch-1") {
		t.Fatalf("switch listed as %v", s)
	}
	if strings.Contains(inv.String(), "pw") {
		t.Fatal("ListNodeInventory leaked credentials")
	}
}

func TestCreateNodesPartialFailureIsInBand(t *testing.T) {
	client, reg := inventoryClient(t)
	noBMC := typedNode("rack-b", "compute-2", rmspb.NodeType_COMPUTE_GB200_NVIDIA)
	noBMC.BmcEndpoint = nil
	resp, err := client.CreateNodes(rpcContext(t), &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		typedNode("rack-b", "compute-1", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
		noBMC,
		typedNode("rack-b", "compute-3", rmspb.NodeType_COMPUTE_GB300_NVIDIA),
	}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "compute-2: bmc_endpoint is required\n" +
		"compute-3: node compute-3 is a GB300 node but rack rack-b is a GB200 rack\n" +
		"1 added, 2 failed"
	if resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetStats().GetFailedNodes() != 2 ||
		resp.GetStats().GetSuccessfulNodes() != 1 || resp.GetStats().GetTotalNodes() != 3 || resp.GetResponse().GetMessage() != want {
		t.Fatalf("CreateNodes = %v, want message %q", resp, want)
	}
	if _, err := reg.Node("rack-b", "compute-1"); err != nil {
		t.Fatalf("the valid node must still be registered: %v", err)
	}
}

func TestNodeNormalisationErrorsAreInvalidArgument(t *testing.T) {
	client, reg := inventoryClient(t)
	bad := rmspb.NodeType(77)
	tests := []struct {
		name string
		node *rmspb.NodeInfo
		want string
	}{
		{"invalid enum", &rmspb.NodeInfo{NodeId: "n", RackId: "r", Type: &bad}, "invalid node type 77"},
		{"unknown descriptor", describedNode("r", "n", map[string]string{"role": "switch", "vendor": "delta", "product_family": "gb200"}), "no supported node type"},
		{"missing attribute", describedNode("r", "n", map[string]string{"role": "compute", "vendor": "nvidia"}), "missing or empty product_family"},
		{"neither", &rmspb.NodeInfo{NodeId: "n", RackId: "r"}, "set type or node_descriptor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.CreateNodes(rpcContext(t), &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
				typedNode("r", "good", rmspb.NodeType_COMPUTE_GB200_NVIDIA), tt.node,
			}}})
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want INVALID_ARGUMENT with %q", err, tt.want)
			}
		})
	}
	if len(reg.Racks()) != 0 {
		t.Fatal("a refused request must register nothing")
	}
}

func TestUpdateAndDeleteNode(t *testing.T) {
	client, reg, engine := inventoryFixture(t)
	ctx := rpcContext(t)
	if _, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		typedNode("rack-c", "compute-1", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
	}}}); err != nil {
		t.Fatal(err)
	}
	up, err := client.UpdateNode(ctx, &rmspb.UpdateNodeRequest{RackId: "rack-c", NodeId: "compute-1",
		UpdateInfo: &rmspb.NodeUpdateInfo{BmcEndpoint: userPassEndpoint("10.7.7.7", "root", "new-pw")}})
	if err != nil || up.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("UpdateNode = %v, %v", up, err)
	}
	n, _ := reg.Node("rack-c", "compute-1")
	if n.BMC.IP != "10.7.7.7" || n.BMC.Credentials.Password.Reveal() != "new-pw" {
		t.Fatalf("node after update: %+v", n.BMC)
	}
	missing, err := client.UpdateNode(ctx, &rmspb.UpdateNodeRequest{RackId: "rack-c", NodeId: "nope",
		UpdateInfo: &rmspb.NodeUpdateInfo{BmcEndpoint: userPassEndpoint("10.7.7.7", "root", "pw")}})
	if err != nil || missing.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(missing.GetResponse().GetMessage(), "nope") {
		t.Fatalf("UpdateNode unknown = %v, %v", missing, err)
	}

	// A job on the node: the deletion is refused in-band, naming it.
	gate := make(chan struct{})
	job, err := engine.Create(ctx, messages.JobSpec{Type: messages.TypeFirmwareUpdate, RackID: "rack-c", NodeID: "compute-1"},
		messages.WorkflowFunc(func(_ context.Context, r messages.Reporter) { <-gate; _ = r.Complete("Completed", "") }), nil)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := client.DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: "rack-c", NodeId: "compute-1"})
	want := "job already in progress for rack rack-c node compute-1 (job_id " + job.ID + ")"
	if err != nil || busy.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || busy.GetResponse().GetMessage() != want {
		t.Fatalf("DeleteNode of a node a job holds = %v, %v", busy, err)
	}
	close(gate)
	if err := engine.Wait(ctx, job.ID); err != nil {
		t.Fatal(err)
	}
	// A rack-wide power operation in progress: refused too.
	rackLease, err := engine.Lease(ctx, messages.AcquireLease{ID: "power", Operation: "SetPowerState", Racks: []string{"rack-c"}})
	if err != nil || rackLease.Err != nil {
		t.Fatal(err, rackLease.Err)
	}
	busy, err = client.DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: "rack-c", NodeId: "compute-1"})
	if err != nil || busy.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || !strings.Contains(busy.GetResponse().GetMessage(), "rack rack-c is busy: SetPowerState") {
		t.Fatalf("DeleteNode during a rack power operation = %v, %v", busy, err)
	}
	if err := engine.Release(ctx, "power"); err != nil {
		t.Fatal(err)
	}
	del, err := client.DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: "rack-c", NodeId: "compute-1"})
	if err != nil || del.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
		t.Fatalf("DeleteNode = %v, %v", del, err)
	}
	gone, _ := client.DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: "rack-c", NodeId: "compute-1"})
	if gone.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE {
		t.Fatalf("second DeleteNode = %v", gone)
	}
}

func TestParallelCreateAndDeleteOverGRPC(t *testing.T) {
	client, reg := inventoryClient(t)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				id := fmt.Sprintf("n-%d-%d", w, i)
				resp, err := client.CreateNodes(rpcContext(t), &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
					typedNode("shared", id, rmspb.NodeType_COMPUTE_GB200_NVIDIA),
				}}})
				if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
					t.Errorf("create %s: %v %v", id, resp, err)
				}
				if i%2 == 0 {
					if resp, err := client.DeleteNode(rpcContext(t), &rmspb.DeleteNodeRequest{RackId: "shared", NodeId: id}); err != nil ||
						resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS {
						t.Errorf("delete %s: %v %v", id, resp, err)
					}
				}
			}
		}(w)
	}
	wg.Wait()
	nodes, err := reg.NodesOfType("shared", hw.ComputeGB200Nvidia)
	if err != nil || len(nodes) != 80 {
		t.Fatalf("%d nodes left, want 80 (%v)", len(nodes), err)
	}
}

// UpdateNode without update_info (or with an empty one) is refused in-band;
// it used to dereference the missing message and answer INTERNAL.
func TestUpdateNodeWithoutUpdateInfo(t *testing.T) {
	client, reg := inventoryClient(t)
	ctx := rpcContext(t)
	if _, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		typedNode("rack-u", "compute-1", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
	}}}); err != nil {
		t.Fatal(err)
	}
	for _, info := range []*rmspb.NodeUpdateInfo{nil, {}} {
		resp, err := client.UpdateNode(ctx, &rmspb.UpdateNodeRequest{RackId: "rack-u", NodeId: "compute-1", UpdateInfo: info})
		if err != nil || resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE ||
			resp.GetResponse().GetMessage() != "update_info names neither bmc_endpoint nor host_endpoint" {
			t.Fatalf("UpdateNode(update_info=%v) = %v, %v", info, resp, err)
		}
	}
	if n, err := reg.Node("rack-u", "compute-1"); err != nil || n.BMC.IP != bmcIP("rack-u", "compute-1") {
		t.Fatalf("the node changed: %+v, %v", n, err)
	}
}

func TestDeleteNodeMessagesAndTheEmptyRack(t *testing.T) {
	client, _ := inventoryClient(t)
	ctx := rpcContext(t)
	if _, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{
		typedNode("rack-e", "compute-1", rmspb.NodeType_COMPUTE_GB200_NVIDIA),
	}}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		rack, node string
		want       rmspb.ReturnCode
		message    string
	}{
		{"rack-x", "compute-1", rmspb.ReturnCode_RETURN_CODE_FAILURE, "rack not found: rack-x"},
		{"rack-e", "compute-9", rmspb.ReturnCode_RETURN_CODE_FAILURE, "node compute-9 not found in rack rack-e"},
		{"rack-e", "compute-1", rmspb.ReturnCode_RETURN_CODE_SUCCESS, "node compute-1 removed"},
		{"rack-e", "compute-1", rmspb.ReturnCode_RETURN_CODE_FAILURE, "node compute-1 not found in rack rack-e"},
	}
	for _, tt := range tests {
		resp, err := client.DeleteNode(ctx, &rmspb.DeleteNodeRequest{RackId: tt.rack, NodeId: tt.node})
		if err != nil || resp.GetResponse().GetStatus() != tt.want || resp.GetResponse().GetMessage() != tt.message {
			t.Errorf("DeleteNode(%s, %s) = %v, %v, want %v %q", tt.rack, tt.node, resp, err, tt.want, tt.message)
		}
	}
	// As upstream, the rack outlives its last node.
	racksResp, err := client.ListRacks(ctx, &rmspb.ListRacksRequest{})
	if err != nil || strings.Join(racksResp.GetRackIds(), ",") != "rack-e" {
		t.Fatalf("ListRacks after deleting the rack's last node = %v, %v", racksResp, err)
	}
	inv, err := client.ListNodeInventory(ctx, &rmspb.ListNodeInventoryRequest{})
	if err != nil || len(inv.GetNodes()) != 0 {
		t.Fatalf("ListNodeInventory = %v, %v", inv, err)
	}
}

// CreateNodes refuses, node by node, what a BMC cannot take: a session
// token (BMCs log in with username/password) and an address that is neither
// an IP address nor a host name. Re-adding a node unchanged is a success;
// with other settings it is a conflict.
func TestCreateNodesRefusesUnusableEndpointsAndConflicts(t *testing.T) {
	client, reg := inventoryClient(t)
	ctx := rpcContext(t)
	original := typedNode("rack-f", "compute-1", rmspb.NodeType_COMPUTE_GB200_NVIDIA)
	token := typedNode("rack-f", "compute-2", rmspb.NodeType_COMPUTE_GB200_NVIDIA)
	token.BmcEndpoint.Credentials = &rmspb.Credentials{Auth: &rmspb.Credentials_SessionToken{SessionToken: "opaque-token"}}
	badIP := typedNode("rack-f", "compute-3", rmspb.NodeType_COMPUTE_GB200_NVIDIA)
	badIP.BmcEndpoint.Interface.IpAddress = "10.0.0.300:443"
	hostName := typedNode("rack-f", "compute-4", rmspb.NodeType_COMPUTE_GB200_NVIDIA)
	hostName.BmcEndpoint.Interface.IpAddress = "bmc-04.rack-f.example.net"
	resp, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{original, token, badIP, hostName}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "compute-2: bmc_endpoint has a session_token; BMCs take username/password credentials\n" +
		`compute-3: bmc_endpoint ip_address "10.0.0.300:443" is neither an IP address nor a valid host name` + "\n" +
		"2 added, 2 failed"
	if resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetResponse().GetMessage() != want {
		t.Fatalf("CreateNodes = %q, want %q", resp.GetResponse().GetMessage(), want)
	}
	if strings.Contains(resp.String(), "opaque-token") {
		t.Fatal("the session token leaked into the reply")
	}

	again, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{original, hostName}}})
	if err != nil || again.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_SUCCESS || again.GetResponse().GetMessage() != "2 added, 0 failed" {
		t.Fatalf("re-adding unchanged nodes = %v, %v", again, err)
	}
	moved := typedNode("rack-f", "compute-1", rmspb.NodeType_COMPUTE_GB200_NVIDIA)
	moved.BmcEndpoint.Interface.IpAddress = "10.0.0.99"
	conflict, err := client.CreateNodes(ctx, &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: []*rmspb.NodeInfo{moved}}})
	if err != nil || conflict.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE ||
		conflict.GetResponse().GetMessage() != "compute-1: node compute-1 already exists in rack rack-f with other settings; use UpdateNode or DeleteNode first\n0 added, 1 failed" {
		t.Fatalf("re-adding with another BMC address = %v, %v", conflict, err)
	}
	if n, _ := reg.Node("rack-f", "compute-1"); n.BMC.IP != bmcIP("rack-f", "compute-1") {
		t.Fatalf("the conflicting registration changed the node: %+v", n.BMC)
	}
	// The same checks guard UpdateNode.
	up, err := client.UpdateNode(ctx, &rmspb.UpdateNodeRequest{RackId: "rack-f", NodeId: "compute-1",
		UpdateInfo: &rmspb.NodeUpdateInfo{BmcEndpoint: token.BmcEndpoint}})
	if err != nil || up.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE ||
		up.GetResponse().GetMessage() != "bmc_endpoint has a session_token; BMCs take username/password credentials" {
		t.Fatalf("UpdateNode to a session token = %v, %v", up, err)
	}
}

// However many nodes fail, the CreateNodes message lists the first ten and
// counts the rest, each line bounded.
func TestCreateNodesMessageIsBounded(t *testing.T) {
	client, _ := inventoryClient(t)
	var nodes []*rmspb.NodeInfo
	for i := 0; i < 40; i++ {
		n := typedNode("rack-g", fmt.Sprintf("%0256d", i), rmspb.NodeType_COMPUTE_GB200_NVIDIA)
		n.BmcEndpoint.Interface.IpAddress = strings.Repeat("x", 10_000)
		nodes = append(nodes, n)
	}
	resp, err := client.CreateNodes(rpcContext(t), &rmspb.CreateNodesRequest{Nodes: &rmspb.NodeSet{Nodes: nodes}})
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.GetResponse().GetMessage()
	lines := strings.Split(msg, "\n")
	if len(msg) > 4096 || len(lines) != 12 || lines[10] != "and 30 more" || lines[11] != "0 added, 40 failed" ||
		!strings.HasPrefix(lines[0], fmt.Sprintf("%0256d: bmc_endpoint ip_address", 0)) {
		t.Fatalf("%d bytes, %d lines: %q", len(msg), len(lines), msg)
	}
}
