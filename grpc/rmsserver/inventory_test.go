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
	return &rmspb.NodeInfo{NodeId: id, RackId: rack, Type: &t, BmcEndpoint: userPassEndpoint("10.0.0.1", "admin", "bmc-pw")}
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
	return rmspb.NewRackManagerClient(startTestServer(t, Deps{Racks: reg, Jobs: e})), reg, e
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
	if s := byID["switch-1"]; strings.Join(s.GetHostIpAddresses(), ",") != "10.0.1.1" || s.GetIpAddress() != "10.0.0.1" {
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
	msg := resp.GetResponse().GetMessage()
	if resp.GetResponse().GetStatus() != rmspb.ReturnCode_RETURN_CODE_FAILURE || resp.GetStats().GetFailedNodes() != 2 ||
		!strings.Contains(msg, "rack-b/compute-2") || !strings.Contains(msg, "bmc_endpoint is required") ||
		!strings.Contains(msg, "GB300 node but rack rack-b is a GB200 rack") {
		t.Fatalf("CreateNodes = %v", resp)
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
